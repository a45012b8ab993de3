package perplexity

import (
	"math"
	"path/filepath"
	"testing"

	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama"
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
	m, err := model.FromFile(f, model.Options{Threads: 2, KVType: model.KVF32, Exact: exact})
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
			row := d.Logits[i]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = max(mx, float64(v))
			}
			var s float64
			for _, v := range row {
				s += math.Exp(float64(v) - mx)
			}
			acc.add(mx + math.Log(s) - float64(row[tokens[c+i+1]]))
		}
	}
	return acc.estimate()
}

// Every batching of the chunks (several passes per chunk, one pass per
// chunk, several chunks per pass) computes what the reference computes.
func TestRunMatchesReference(t *testing.T) {
	m := demoModel(t, true)
	vocab := m.Info().Vocab
	tokens := testTokens(3*24+5, vocab)
	for _, bos := range []int{-1, 1} {
		want := reference(t, m, tokens, 24, bos)
		for _, b := range []int{5, 24, 100} {
			res, err := Run(m, tokens, Options{Ctx: 24, Batch: b, BOS: bos})
			if err != nil {
				t.Fatal(err)
			}
			if res.Chunks != 3 || res.Scored != 3*11 || res.Evaluated != 3*23 {
				t.Errorf("b %d: %d chunks, %d scored, %d evaluated; want 3, 33, 69", b, res.Chunks, res.Scored, res.Evaluated)
			}
			// The passes group tokens differently from the reference's
			// single pass; the kernels' row results do not depend on it
			// beyond float rounding.
			if d := math.Abs(res.PPL-want.PPL) / want.PPL; d > 1e-5 || math.Abs(res.Err-want.Err)/want.Err > 1e-4 {
				t.Errorf("bos %d, b %d: PPL %.6f ± %.6f, reference %.6f ± %.6f", bos, b, res.PPL, res.Err, want.PPL, want.Err)
			}
		}
	}
	res, err := Run(m, tokens, Options{Ctx: 24, Chunks: 2, BOS: -1})
	if err != nil || res.Chunks != 2 {
		t.Errorf("--chunks 2: %v chunks, %v", res.Chunks, err)
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
