package grammar_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"trit/convert"
	"trit/engine"
	"trit/gguf"
	"trit/grammar"
	"trit/internal/schematest"
	"trit/internal/testdata"
	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama" // the demo model (qwen3) and stories260K (llama)
	"trit/sample"
	"trit/tokenizer"
)

// schemaGen draws random schemas over the supported keywords. Sizes are
// bounded (strings, arrays) so that a random model finishes most answers
// within the token budget.
type schemaGen struct{ rng *rand.Rand }

var (
	propNames = []string{"a", "name", "id", "tags", "x_y", "é", "value"}
	patterns  = []string{`^[a-z]{1,4}$`, `^\d{2}-\d{2}$`, `^(foo|bar)[0-9]?$`, `^[A-Z][a-z]{0,3}\.?$`, `^[^"\\ ]{2}$`}
	formats   = []string{"date", "time", "date-time", "uuid"}
)

func (g schemaGen) pick(n int) int { return g.rng.IntN(n) }

func (g schemaGen) schema(depth int) map[string]any {
	kinds := 13
	if depth >= 3 {
		kinds = 8 // leaves only
	}
	switch g.pick(kinds) {
	case 0:
		lo := g.pick(3)
		return map[string]any{"type": "string", "minLength": lo, "maxLength": lo + g.pick(5)}
	case 1:
		s := map[string]any{"type": "integer"}
		if g.pick(2) == 0 {
			lo := g.pick(100) - 50
			s["minimum"], s["maximum"] = lo, lo+g.pick(200)
		}
		if g.pick(3) == 0 {
			s["exclusiveMinimum"] = g.pick(30) - 15
		}
		return s
	case 2:
		s := map[string]any{"type": "number"}
		if g.pick(2) == 0 {
			lo := g.pick(20) - 10
			s["minimum"], s["maximum"] = lo, lo+g.pick(20)
		}
		return s
	case 3:
		return map[string]any{"type": []string{"boolean", "null"}[g.pick(2)]}
	case 4:
		return map[string]any{"enum": []any{"red", 3, nil, true, "日本", map[string]any{"k": []int{1}}}[:1+g.pick(6)]}
	case 5:
		return map[string]any{"const": []any{"c", 1.5, false, []any{}}[g.pick(4)]}
	case 6:
		return map[string]any{"type": "string", "format": formats[g.pick(len(formats))]}
	case 7:
		return map[string]any{"type": "string", "pattern": patterns[g.pick(len(patterns))]}
	case 8, 9:
		props := map[string]any{}
		var req []string
		for range 1 + g.pick(3) {
			n := propNames[g.pick(len(propNames))]
			props[n] = g.schema(depth + 1)
			if g.pick(2) == 0 && !contains(req, n) {
				req = append(req, n)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(req) > 0 {
			s["required"] = req
		}
		if g.pick(2) == 0 {
			s["additionalProperties"] = false
		}
		return s
	case 10:
		lo := g.pick(2)
		return map[string]any{"type": "array", "items": g.schema(depth + 1), "minItems": lo, "maxItems": lo + g.pick(3)}
	case 11:
		return map[string]any{"anyOf": []any{g.schema(depth + 1), g.schema(depth + 1)}}
	default:
		// oneOf over branches of different types, so that exactly one
		// matches.
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string", "maxLength": 3},
			map[string]any{"type": "null"},
			map[string]any{"type": "array", "items": g.schema(depth + 1), "maxItems": 2},
		}[:2+g.pick(2)]}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// top wraps some schemas in $defs/$ref and type arrays.
func (g schemaGen) top() map[string]any {
	switch g.pick(5) {
	case 0:
		return map[string]any{"$defs": map[string]any{"item": g.schema(1)}, "type": "object",
			"properties": map[string]any{"first": map[string]any{"$ref": "#/$defs/item"}, "more": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/item"}, "maxItems": 2}},
			"required":   []string{"first"}}
	case 1:
		return map[string]any{"type": []string{"object", "null"}, "properties": map[string]any{"v": g.schema(1)}, "required": []string{"v"}}
	}
	return g.schema(0)
}

// checkSchemas samples eng at temperature 1 under n random schemas and
// checks that every finished answer validates.
func checkSchemas(t *testing.T, eng *engine.Engine, prompt string, n int) {
	vocab := grammar.TokenizerVocab(eng.Tok, eng.EOG)
	ids := eng.Tok.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true})
	gen := schemaGen{rand.New(rand.NewPCG(19, 1))}
	finished := 0
	for i := range n {
		schema, err := json.Marshal(gen.top())
		if err != nil {
			t.Fatal(err)
		}
		g, err := grammar.FromJSONSchema(schema)
		if err != nil {
			t.Fatalf("schema %d %s: %v", i, schema, err)
		}
		c, err := g.NewConstraint(vocab, grammar.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := eng.Model.NewState(len(ids) + 300)
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Generate(context.Background(), st, ids, engine.Params{MaxTokens: 256,
			Sample: sample.Params{Temperature: 1, Seed: uint64(i)}, Constraint: c}, nil)
		if err != nil {
			t.Fatalf("schema %d %s: %v", i, schema, err)
		}
		if res.FinishReason != "stop" {
			continue
		}
		finished++
		if err := schematest.Validator(t, string(schema))(res.Text); err != nil {
			t.Errorf("schema %d %s: output %q does not validate: %v", i, schema, res.Text, err)
		}
	}
	t.Logf("%d of %d answers finished within 256 tokens", finished, n)
	// A random model finishes most bounded answers; a grammar that never
	// completes would leave nothing to validate.
	if finished < n*3/4 {
		t.Errorf("only %d of %d answers finished", finished, n)
	}
}

// TestRandomSchemasDemo samples the built-in random-weight model (its
// byte tokens split UTF-8 characters) under 200 random schemas.
func TestRandomSchemasDemo(t *testing.T) {
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	checkSchemas(t, engineOf(t, f), "JSON:", 200)
}

// TestRandomSchemasStories260K does the same with llama2.c's trained
// stories260K model and its 512-token SentencePiece vocabulary.
func TestRandomSchemasStories260K(t *testing.T) {
	dir := testdata.Path(t, "llama2c")
	out := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := convert.Llama2CFile(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"), out); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkSchemas(t, engineOf(t, f), "Once upon a time", 200)
}

func engineOf(t *testing.T, f *gguf.File) *engine.Engine {
	t.Helper()
	e, err := engine.FromFile(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Model.Close() })
	return e
}
