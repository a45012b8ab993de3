package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"trit/engine"
	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama"
	"trit/sample"
	"trit/tokenizer"
)

func newEngine(t *testing.T) *engine.Engine {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromFile(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Engine{Model: m, Tok: tok, EOG: tokenizer.EndOfGeneration(f, tok), Batch: 3}
}

var greedy = sample.Params{Temperature: 0}

func generate(t *testing.T, e *engine.Engine, prompt string, p engine.Params, ctxLen int) (*engine.Result, string) {
	t.Helper()
	st, err := e.Model.NewState(ctxLen)
	if err != nil {
		t.Fatal(err)
	}
	ids := e.Tok.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true})
	var sb strings.Builder
	res, err := e.Generate(context.Background(), st, ids, p, func(s string) error { sb.WriteString(s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return res, sb.String()
}

func TestGenerateLengthAndStreaming(t *testing.T) {
	e := newEngine(t)
	res, streamed := generate(t, e, "Hello", engine.Params{MaxTokens: 12, Sample: greedy, IgnoreEOG: true}, 64)
	if len(res.Tokens) != 12 || res.FinishReason != "length" {
		t.Fatalf("%d tokens, finish %q; want 12, length", len(res.Tokens), res.FinishReason)
	}
	if streamed != res.Text || res.Text != e.Tok.Decode(res.Tokens) {
		t.Errorf("streamed %q, result %q, decoded %q: want all equal", streamed, res.Text, e.Tok.Decode(res.Tokens))
	}
	if res.PromptTokens != 5 {
		t.Errorf("prompt tokens %d, want 5", res.PromptTokens)
	}
}

// Prefill in batches (Batch is 3 here) gives the same greedy text as the
// whole prompt at once.
func TestBatchedPrefillMatches(t *testing.T) {
	e := newEngine(t)
	p := engine.Params{MaxTokens: 10, Sample: greedy, IgnoreEOG: true}
	a, _ := generate(t, e, "A longer prompt for batching", p, 64)
	e.Batch = 512
	b, _ := generate(t, e, "A longer prompt for batching", p, 64)
	if a.Text != b.Text {
		t.Errorf("batch 3: %q, batch 512: %q", a.Text, b.Text)
	}
}

func TestStopString(t *testing.T) {
	e := newEngine(t)
	full, _ := generate(t, e, "Hello", engine.Params{MaxTokens: 16, Sample: greedy, IgnoreEOG: true}, 64)
	if len(full.Text) < 6 {
		t.Fatalf("text too short to cut: %q", full.Text)
	}
	stop := full.Text[3:6]
	res, streamed := generate(t, e, "Hello", engine.Params{MaxTokens: 16, Sample: greedy, IgnoreEOG: true, Stop: []string{stop}}, 64)
	want := full.Text[:strings.Index(full.Text, stop)]
	if res.FinishReason != "stop" || res.Text != want || streamed != want {
		t.Errorf("finish %q, text %q, streamed %q; want stop, %q", res.FinishReason, res.Text, streamed, want)
	}
}

func TestEndOfGeneration(t *testing.T) {
	e := newEngine(t)
	full, _ := generate(t, e, "Hi", engine.Params{MaxTokens: 8, Sample: greedy, IgnoreEOG: true}, 64)
	// Declare the third generated token an end-of-generation token.
	e.EOG = []int{full.Tokens[2]}
	res, _ := generate(t, e, "Hi", engine.Params{MaxTokens: 8, Sample: greedy}, 64)
	if res.FinishReason != "stop" || len(res.Tokens) != 2 {
		t.Errorf("finish %q after %d tokens; want stop after 2", res.FinishReason, len(res.Tokens))
	}
}

func TestContextLimits(t *testing.T) {
	e := newEngine(t)
	res, _ := generate(t, e, "Hello", engine.Params{Sample: greedy, IgnoreEOG: true}, 9)
	if res.FinishReason != "length" || len(res.Tokens) != 5 {
		t.Errorf("finish %q after %d tokens; want length after 5 (context 9, prompt 5)", res.FinishReason, len(res.Tokens))
	}
	st, _ := e.Model.NewState(3)
	ids := e.Tok.Encode("Hello", tokenizer.EncodeOptions{})
	if _, err := e.Generate(context.Background(), st, ids, engine.Params{Sample: greedy}, nil); !errors.Is(err, engine.ErrContextFull) {
		t.Errorf("prompt longer than the context: err %v, want ErrContextFull", err)
	}
}

func TestCancel(t *testing.T) {
	e := newEngine(t)
	st, _ := e.Model.NewState(64)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := e.Generate(ctx, st, e.Tok.Encode("Hello", tokenizer.EncodeOptions{}), engine.Params{Sample: greedy, IgnoreEOG: true}, func(string) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != "cancelled" || len(res.Tokens) > 4 {
		t.Errorf("finish %q after %d tokens; want cancelled within a token", res.FinishReason, len(res.Tokens))
	}
	// An error from emit stops generation and is returned.
	boom := errors.New("boom")
	st.Reset()
	if _, err := e.Generate(context.Background(), st, e.Tok.Encode("Hello", tokenizer.EncodeOptions{}), engine.Params{Sample: greedy, IgnoreEOG: true}, func(string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("emit error: got %v", err)
	}
}
