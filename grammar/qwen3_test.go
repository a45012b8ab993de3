package grammar_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"trit/grammar"
	"trit/internal/testdata"
	"trit/tokenizer"
)

// benchSchema is a typical structured-output schema: nested object,
// bounded and free strings, an integer range, an array, a pattern.
const benchSchema = `{"type":"object","properties":{
  "name":{"type":"string","maxLength":40},
  "age":{"type":"integer","minimum":0,"maximum":150},
  "email":{"type":"string"},
  "tags":{"type":"array","items":{"type":"string"},"maxItems":5},
  "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]},
  "verified":{"type":"boolean"}},
 "required":["name","age","address"],"additionalProperties":false}`

// benchAnswer is an answer a model would write, tokenized by the real
// Qwen3 tokenizer for the benchmark's token path.
const benchAnswer = `{"name": "Ana María Gómez", "age": 34, "email": "ana.gomez@example.com", "tags": ["engineer", "runner", "日本語"], "address": {"city": "São Paulo", "zip": "01310"}, "verified": true}`

// BenchmarkMaskQwen3 measures the grammar's cost per decode step on the
// Qwen3 vocabulary padded to the Bonsai-1.7B head (151,936 logits): a
// fresh Constraint per generation (no masks cached from earlier
// requests), then Mask and Accept for each token of benchAnswer.
func BenchmarkMaskQwen3(b *testing.B) {
	tok := qwen3(b)
	t0 := time.Now()
	v := grammar.TokenizerVocab(tok, qwen3EOG)
	b.Logf("vocabulary trie built in %v", time.Since(t0))
	g, err := grammar.FromJSONSchema([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	ids := tok.Encode(benchAnswer, tokenizer.EncodeOptions{})
	logits := make([]float32, 151936)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		c, err := g.NewConstraint(v, grammar.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			if err := c.Mask(logits); err != nil {
				b.Fatal(err)
			}
			if err := c.Accept(id); err != nil {
				b.Fatalf("token %d %q: %v", id, tok.Decode([]int{id}), err)
			}
		}
		if !c.Done() {
			b.Fatal("the answer does not complete the grammar")
		}
	}
	steps := float64(b.N * len(ids))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
	// CPU time is steadier than wall time on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/steps, "cpu-ns/step")
	b.ReportMetric(float64(len(ids)), "steps")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// qwen3EOG are <|endoftext|> and <|im_end|>.
var qwen3EOG = []int{151643, 151645}

// qwen3 loads the real Qwen3 tokenizer, or skips.
func qwen3(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	f, err := os.Open(testdata.Path(tb, "tokenizers", "qwen3", "tokenizer.json"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromHuggingFace(f)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// TestQwen3Reasoning follows what Qwen3 writes with thinking on, token by
// token on its real vocabulary (<think> and </think> are single tokens,
// "\n\n" and `{"` merged ones): every token passes the mask, the answer
// completes the schema, and Done comes at its last token.
func TestQwen3Reasoning(t *testing.T) {
	tok := qwen3(t)
	v := grammar.TokenizerVocab(tok, qwen3EOG)
	g, err := grammar.FromJSONSchema([]byte(benchSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    grammar.Reasoning
		text string
	}{
		{grammar.MaybeReasoning, "<think>\nThe user wants JSON {like this}.\n</think>\n\n" + benchAnswer},
		{grammar.MaybeReasoning, benchAnswer},
		{grammar.InReasoning, "Okay, so: {\"name\"}</think>\n\n" + benchAnswer},
		{grammar.NoReasoning, benchAnswer},
	} {
		c, err := g.NewConstraint(v, grammar.Options{Reasoning: tc.o})
		if err != nil {
			t.Fatal(err)
		}
		ids := tok.Encode(tc.text, tokenizer.EncodeOptions{ParseSpecial: true})
		logits := make([]float32, 151936)
		for i, id := range ids {
			if c.Done() {
				t.Fatalf("%q: done before token %d", tc.text, i)
			}
			clear(logits)
			if err := c.Mask(logits); err != nil {
				t.Fatal(err)
			}
			if logits[id] != 0 {
				t.Fatalf("%q: token %d %q masked", tc.text, i, tok.Decode([]int{id}))
			}
			if err := c.Accept(id); err != nil {
				t.Fatal(err)
			}
		}
		if !c.Done() {
			t.Errorf("%q: not done at the end", tc.text)
		}
	}
}

// BenchmarkMaskQwen3Reasoning measures Mask inside free reasoning (before
// </think>): end-of-generation barred, tokens that would close the
// reasoning into text the grammar rejects removed.
func BenchmarkMaskQwen3Reasoning(b *testing.B) {
	tok := qwen3(b)
	v := grammar.TokenizerVocab(tok, qwen3EOG)
	g, err := grammar.FromJSONSchema([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	c, err := g.NewConstraint(v, grammar.Options{Reasoning: grammar.InReasoning})
	if err != nil {
		b.Fatal(err)
	}
	logits := make([]float32, 151936)
	for b.Loop() {
		if err := c.Mask(logits); err != nil {
			b.Fatal(err)
		}
	}
}
