package grammar

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary text to the GBNF parser: it must return a
// grammar or an error, never panic or hang, and a grammar must then match
// and mask text without failing.
func FuzzParse(f *testing.F) {
	for _, s := range []string{arithmeticGBNF, jsonGBNF, listGBNF, chessGBNF, `root ::= "a"{2,5} [^x-z] . | ("b" root)?`,
		"root ::= x\nx ::= [\\u00e9-\\U0001F600]+ \"\\x41\"", `root ::= ( "a" | "" )* "b"`} {
		f.Add(s, "1+2=3\n")
	}
	pieces, eog := testPieces()
	v := NewVocab(pieces, []int{eog})
	f.Fuzz(func(t *testing.T, src, text string) {
		g, err := Parse(src)
		if err != nil {
			if g != nil {
				t.Fatal("a grammar and an error")
			}
			return
		}
		full := g.Match(text)
		if full && !g.MatchPrefix(text) {
			t.Fatalf("%q matches but is no prefix", text)
		}
		c, err := g.NewConstraint(v, Options{})
		if err != nil {
			return // e.g. a root that matches nothing
		}
		logits := make([]float32, len(pieces))
		if err := c.Mask(logits); err == nil {
			for id, l := range logits {
				if l == 0 && id != eog && !g.MatchPrefix(pieces[id]) {
					t.Fatalf("token %q allowed but no prefix", pieces[id])
				}
			}
		}
	})
}

// FuzzJSONObject checks the json_object grammar against encoding/json: a
// text it matches is a valid JSON object.
func FuzzJSONObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5,"x"]}`, `{"a":{"b":null}}`, `{"\u00e9":true}`, `{"a":-0e1}`, " {\n \"k\": \"v\"}"} {
		f.Add(s)
	}
	g := JSONObject()
	f.Fuzz(func(t *testing.T, s string) {
		if !g.Match(s) {
			return
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil || !utf8.ValidString(s) {
			t.Fatalf("matched %q: %v", s, err)
		}
	})
}

// FuzzFromJSONSchema feeds arbitrary schemas to the converter: a grammar
// or an error, never a panic.
func FuzzFromJSONSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"integer","minimum":-3,"maximum":70}},"required":["a"]}`,
		`{"anyOf":[{"type":"string","pattern":"^[a-z]+(x|y){2,3}$"},{"enum":[1,"b",null]}]}`,
		`{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}},"$ref":"#/$defs/n"}`,
		`{"type":"number","minimum":-5,"maximum":5}`, `{"type":"string","format":"date-time"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := FromJSONSchema([]byte(s))
		if err == nil {
			g.Match(`{}`)
		}
	})
}
