package perplexity

import (
	"math"
	"path/filepath"
	"testing"

	"trit/internal/logitcmp"
	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama"
	"trit/quant"
)

// demoModel loads the demo model. The packed kernels quantize activations
// in ways that depend a little on how many rows a pass has, so tests that
// compare batchings use the exact path (float activations), where only
// float rounding differs.
func demoModel(t testing.TB, exact bool) model.Model {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromFile(f, model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32, Exact: exact})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// testTokens is a deterministic token stream inside the demo vocabulary.
func testTokens(n, vocab int) []int {
	ids := make([]int, n)
	x := uint32(20260818)
	for i := range ids {
		x = 1103515245*x + 12345
		ids[i] = int(x>>16) % min(vocab, 256)
	}
	return ids
}

// reference computes the perplexity the slow, obvious way: every chunk as
// one batch from an empty state, float64 log-softmax, the second half
// scored.
func reference(t *testing.T, m model.Model, tokens []int, ctx, bos int) Estimate {
	var acc nll
	for c := 0; c+ctx <= len(tokens); c += ctx {
		chunk := append([]int(nil), tokens[c:c+ctx]...)
		if bos >= 0 {
			chunk[0] = bos
		}
		d, err := model.ComputeLogits(m, chunk, "batch")
		if err != nil {
			t.Fatal(err)
		}
		for i := ctx / 2; i < ctx-1; i++ {
			acc.add(-logitcmp.LogSoftmax(d.Logits[i])[tokens[c+i+1]])
		}
	}
	return acc.estimate()
}

// Every batching of the chunks (several passes per chunk, one pass per
// chunk, several chunks per pass) computes what the reference computes.
func TestRunMatchesReference(t *testing.T) {
	m := demoModel(t, true)
	vocab := m.Info().Vocab
	tokens := testTokens(2*12+5, vocab)
	want := map[int]Estimate{-1: reference(t, m, tokens, 12, -1), 1: reference(t, m, tokens, 12, 1)}
	for _, tc := range []struct{ bos, batch int }{{-1, 5}, {-1, 12}, {-1, 24}, {1, 24}} {
		res, err := Run(m, tokens, Options{Ctx: 12, Batch: tc.batch, BOS: tc.bos})
		if err != nil {
			t.Fatal(err)
		}
		if res.Chunks != 2 || res.Scored != 2*5 || res.Evaluated != 2*11 {
			t.Errorf("%+v: %d chunks, %d scored, %d evaluated; want 2, 10, 22", tc, res.Chunks, res.Scored, res.Evaluated)
		}
		// The passes group tokens differently from the reference's single
		// pass; on the exact path that changes float rounding only.
		w := want[tc.bos]
		if d := math.Abs(res.PPL-w.PPL) / w.PPL; d > 1e-5 || math.Abs(res.Err-w.Err)/w.Err > 1e-4 {
			t.Errorf("%+v: PPL %.6f ± %.6f, reference %.6f ± %.6f", tc, res.PPL, res.Err, w.PPL, w.Err)
		}
	}
	res, err := Run(m, tokens, Options{Ctx: 12, Chunks: 1, BOS: -1})
	if err != nil || res.Chunks != 1 {
		t.Errorf("--chunks 1: %v chunks, %v", res.Chunks, err)
	}
}

func TestRunErrors(t *testing.T) {
	m := demoModel(t, false)
	vocab := m.Info().Vocab
	for _, tc := range []struct {
		name   string
		tokens []int
		o      Options
	}{
		{"too short", testTokens(10, vocab), Options{Ctx: 24}},
		{"tiny context", testTokens(10, vocab), Options{Ctx: 2}},
		{"token outside vocabulary", append(testTokens(30, vocab), vocab), Options{Ctx: 31}},
	} {
		if _, err := Run(m, tc.tokens, tc.o); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// KL of a run against its own saved distributions is exactly zero, with
// whole distributions and with top-k ones, and the base's perplexity is
// the run's. (The same batching: see demoModel.)
func TestKLSelfIsZero(t *testing.T) {
	m := demoModel(t, false)
	vocab := m.Info().Vocab
	tokens := testTokens(4*16, vocab)
	for _, k := range []int{vocab, 8} {
		path := filepath.Join(t.TempDir(), "base.bin")
		o := Options{Ctx: 16, BOS: -1, TopK: k}
		h, err := NewHeader(vocab, tokens, o)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Create(path, h)
		if err != nil {
			t.Fatal(err)
		}
		o.Save = w
		want, err := Run(m, tokens, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(m, nil, Options{Base: r, BOS: -1})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		k := res.KL
		if k.Mean != 0 || k.Max != 0 || k.SameTop != 1 || k.Positions != want.Scored {
			t.Errorf("top %d: KL %+v, want 0 everywhere and same top 1", h.TopK, k)
		}
		if k.Base.PPL != want.PPL || res.PPL != want.PPL || k.Diff != 0 {
			t.Errorf("top %d: PPL %v, base %v, saved run %v", h.TopK, res.PPL, k.Base.PPL, want.PPL)
		}
	}
}
