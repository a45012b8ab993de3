package grammar

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// testPieces is a vocabulary with tokens that span several grammar
// symbols, tokens that split UTF-8 characters, duplicates and a control
// token: every single byte, then longer pieces.
func testPieces() (pieces []string, eog int) {
	for b := range 256 {
		pieces = append(pieces, string([]byte{byte(b)}))
	}
	pieces = append(pieces, `{"`, `":`, `",`, `"}`, `true`, `false`, `null`, `12`, `-3.`, `e+`, ` "a`,
		"é", "\xc3", "\xa9\"", "日本", "\xe6\x97", "\xa5", `\u00`, `\n`, `{"a":1}`, `{}`, `</think>`, `</`, `think>`,
		"<think>", "\n\n", "</think>\n\n{", "<tool_call>", "<tool", "_call>\n{\"", "ab", "ab", "")
	eog = len(pieces) - 1 // the control token ("") ends generation
	return pieces, eog
}

// allowedRef is the reference mask: token by token, whether the grammar
// takes text+piece as a prefix (and end-of-generation when text is a
// sentence), feeding the whole text from the start state each time.
func allowedRef(m *machine, text string, pieces []string, eog int) []bool {
	out := make([]bool, len(pieces))
	for id, p := range pieces {
		if id == eog {
			out[id] = m.accepts(m.feed(m.start(), text))
		} else if p != "" {
			out[id] = m.feed(m.start(), text+p) >= 0
		}
	}
	return out
}

func maskOf(t *testing.T, c *Constraint, n int) ([]bool, error) {
	t.Helper()
	logits := make([]float32, n)
	err := c.Mask(logits)
	out := make([]bool, n)
	for i, l := range logits {
		out[i] = !math.IsInf(float64(l), -1)
	}
	return out, err
}

// TestMaskMatchesReference walks random token paths under several
// grammars and compares the trie mask with the per-token reference at
// every step.
func TestMaskMatchesReference(t *testing.T) {
	pieces, eog := testPieces()
	v := NewVocab(pieces, []int{eog})
	grammars := map[string]*Grammar{"json-object": JSONObject()}
	for name, src := range map[string]string{"json": jsonGBNF, "list": listGBNF, "arith": arithmeticGBNF} {
		g, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		grammars[name] = g
	}
	g, err := FromJSONSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer"},"s":{"type":"string","maxLength":3},"u":{"enum":["é","日本"]}},"required":["a","u"]}`))
	if err != nil {
		t.Fatal(err)
	}
	grammars["schema"] = g
	rng := rand.New(rand.NewPCG(1, 2))
	for name, g := range grammars {
		ref := newMachine(g)
		for run := range 10 {
			c, err := g.NewConstraint(v, Options{})
			if err != nil {
				t.Fatal(err)
			}
			text := ""
			for step := 0; step < 40 && !c.Done(); step++ {
				got, err := maskOf(t, c, len(pieces))
				want := allowedRef(ref, text, pieces, eog)
				any := false
				for id := range want {
					any = any || want[id]
					if got[id] != want[id] {
						t.Fatalf("%s run %d step %d after %q: token %d %q allowed=%v, reference says %v", name, run, step, text, id, pieces[id], got[id], want[id])
					}
				}
				if !any {
					if !errors.Is(err, ErrDead) {
						t.Fatalf("%s: no token allowed but Mask returned %v", name, err)
					}
					break
				}
				var ids []int
				for id, ok := range got {
					if ok {
						ids = append(ids, id)
					}
				}
				id := ids[rng.IntN(len(ids))]
				if id == eog {
					break
				}
				if err := c.Accept(id); err != nil {
					t.Fatal(err)
				}
				text += pieces[id]
			}
			if c.Done() && !g.Match(text) {
				t.Errorf("%s: Done after %q, which the grammar rejects", name, text)
			}
		}
	}
}

func TestConstraintUTF8Split(t *testing.T) {
	g, err := Parse(`root ::= "é" [^a]{2}`)
	if err != nil {
		t.Fatal(err)
	}
	pieces, eog := testPieces()
	c, err := g.NewConstraint(NewVocab(pieces, []int{eog}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"\xc3", "\xa9\"", "\xe6\x97", "\xa5"} {
		id := indexOf(pieces, p)
		ok, _ := maskOf(t, c, len(pieces))
		if !ok[id] {
			t.Fatalf("%q masked", p)
		}
		if err := c.Accept(id); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Done() {
		t.Error("not done after é\"日")
	}
}

func indexOf(pieces []string, p string) int {
	for i, x := range pieces {
		if x == p {
			return i
		}
	}
	panic("no piece " + p)
}

// feedText accepts the tokens of a greedy longest-match split of text.
func feedText(t *testing.T, c *Constraint, pieces []string, text string) {
	t.Helper()
	for text != "" {
		best := -1
		for id, p := range pieces {
			if p != "" && strings.HasPrefix(text, p) && (best < 0 || len(p) > len(pieces[best])) {
				best = id
			}
		}
		ok, err := maskOf(t, c, len(pieces))
		if err != nil {
			t.Fatalf("Mask before %q: %v", text, err)
		}
		if !ok[best] {
			t.Fatalf("token %q masked before %q", pieces[best], text)
		}
		if err := c.Accept(best); err != nil {
			t.Fatal(err)
		}
		text = text[len(pieces[best]):]
	}
}

func TestConstraintReasoning(t *testing.T) {
	pieces, eog := testPieces()
	v := NewVocab(pieces, []int{eog})
	g := JSONObject()
	tests := []struct {
		name string
		o    Options
		text string
	}{
		{"in reasoning", Options{Reasoning: InReasoning}, "hmm, {not json yet</think>\n\n{\"a\":1}"},
		{"closing tag in pieces", Options{Reasoning: InReasoning}, "x</" + "think>\n\n{}"},
		{"maybe, thinks", Options{Reasoning: MaybeReasoning}, "\n<think>\nok</think>\n\n{}"},
		{"maybe, does not", Options{Reasoning: MaybeReasoning}, "{\"a\":null}"},
		{"trigger", Options{Trigger: "<tool_call>"}, "I will call it. <tool_call>\n{\"a\":true}"},
		{"reasoning then trigger", Options{Reasoning: InReasoning, Trigger: "<tool_call>"}, "a</think>ok<tool_call>{}"},
		{"maybe then trigger, thinks", Options{Reasoning: MaybeReasoning, Trigger: "<tool_call>"}, "<think>no <tool_call> here</think>ok<tool_call>{}"},
		{"maybe then trigger, does not", Options{Reasoning: MaybeReasoning, Trigger: "<tool_call>"}, "ok<tool_call>{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := g.NewConstraint(v, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			feedText(t, c, pieces, tt.text)
			if !c.Done() {
				t.Error("not done at the end of the object")
			}
		})
	}
	// Inside reasoning the answer must still come: no end of generation.
	c, _ := g.NewConstraint(v, Options{Reasoning: InReasoning})
	if ok, _ := maskOf(t, c, len(pieces)); ok[eog] {
		t.Error("end of generation allowed inside reasoning")
	}
	// A token that closes the reasoning and goes on with text the grammar
	// rejects is masked; one going on with a valid start is not.
	c, _ = g.NewConstraint(v, Options{Reasoning: InReasoning})
	ok, _ := maskOf(t, c, len(pieces))
	if !ok[indexOf(pieces, "</think>\n\n{")] || !ok[indexOf(pieces, "</think>")] {
		t.Error("closing tag tokens masked")
	}
	c, _ = Must(Parse(`root ::= "x"`)).NewConstraint(v, Options{Reasoning: InReasoning})
	if ok, _ := maskOf(t, c, len(pieces)); ok[indexOf(pieces, "</think>\n\n{")] {
		t.Error(`"</think>\n\n{" allowed before a grammar of "x"`)
	}
	// Without reasoning, text before the grammar is refused.
	c, _ = g.NewConstraint(v, Options{})
	if ok, _ := maskOf(t, c, len(pieces)); ok[indexOf(pieces, "<think>")] {
		t.Error("<think> allowed without reasoning")
	}
}

func Must(g *Grammar, err error) *Grammar {
	if err != nil {
		panic(err)
	}
	return g
}

func TestUTF8Sequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		lo := rng.Int32N(0x110000)
		hi := min(lo+rng.Int32N(1<<uint(rng.IntN(21))), 0x10FFFF)
		rs := normalize([]runeRange{{lo, hi}})
		var b builder
		b.byName, b.setIdx, b.firstUse = map[string]int{}, map[byteSet]int{}, map[int]string{}
		root := b.rule("root")
		b.define(root, [][]sym{{b.class("root", rs)}})
		g, err := b.finish("root")
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			r := rng.Int32N(0x110000)
			if rng.IntN(2) == 0 {
				r = lo + rng.Int32N(hi-lo+1)
			}
			in := r >= lo && r <= hi && !(r >= surrogateLo && r <= surrogateHi)
			if !utf8.ValidRune(r) {
				continue
			}
			if got := g.Match(string(r)); got != in {
				t.Fatalf("[%#x-%#x] on %#x: %v, want %v", lo, hi, r, got, in)
			}
		}
	}
}
