// Package logitcmp compares logits with reference logits, with the
// measures of ../shared/testdata/reference/README.md.
package logitcmp

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trit/internal/testdata"
	"trit/model"
	"trit/quant"
)

// Read reads a reference logits file of ../shared/testdata/reference.
func Read(t testing.TB, path string) *model.LogitsDump {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d model.LogitsDump
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &d
}

// Agreement is how closely logits follow a reference over all positions.
type Agreement struct {
	MaxAbs        float64 // largest absolute difference
	MeanKL, MaxKL float64 // KL(ref ‖ got) of the softmax distributions
	Top1          int     // positions whose argmax agrees
}

// Compare compares logits position by position.
func Compare(ref, got [][]float32) Agreement {
	var a Agreement
	for i := range ref {
		r, g := ref[i], got[i]
		for j := range r {
			a.MaxAbs = max(a.MaxAbs, math.Abs(float64(r[j]-g[j])))
		}
		kl := klDiv(r, g)
		a.MeanKL += kl / float64(len(ref))
		a.MaxKL = max(a.MaxKL, kl)
		if argmax(r) == argmax(g) {
			a.Top1++
		}
	}
	return a
}

// LogSoftmax returns log-softmax of x in float64: the reference for the
// log-probabilities trit reports.
func LogSoftmax(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - m - math.Log(s)
	}
	return out
}

func klDiv(p, q []float32) float64 {
	lp, lq := LogSoftmax(p), LogSoftmax(q)
	var kl float64
	for i := range lp {
		kl += math.Exp(lp[i]) * (lp[i] - lq[i])
	}
	return kl
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// CheckReference loads every model of ../shared/testdata/reference whose
// file name matches glob, computes its logits in batch and token-by-token
// mode, and checks them with the README's criteria: float files within
// 1e-3 of the reference; quantized files mean KL ≤ 0.03, max KL ≤ 0.2 and
// top-1 agreement on at least 32 of 40 positions.
func CheckReference(t *testing.T, glob string) {
	dir := testdata.Path(t, "reference")
	files, _ := filepath.Glob(filepath.Join(dir, glob))
	if len(files) == 0 {
		t.Skipf("no reference models match %s", glob)
	}
	for _, path := range files {
		stem := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(stem, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, stem+".batch.json")); err != nil {
				t.Skipf("%s has no batch/sequential reference (it serves another test)", stem)
			}
			for _, mode := range []string{"batch", "sequential"} {
				a := run(t, path, filepath.Join(dir, stem+"."+mode+".json"), mode, false)
				t.Logf("%s: max |Δ| %.2e, mean KL %.4f, max KL %.4f, top-1 %d/40", mode, a.MaxAbs, a.MeanKL, a.MaxKL, a.Top1)
				if strings.HasSuffix(stem, "-f32") {
					if a.MaxAbs > 1e-3 {
						t.Errorf("%s: max |Δ| = %g > 1e-3", mode, a.MaxAbs)
					}
				} else if a.MeanKL > 0.03 || a.MaxKL > 0.2 || a.Top1 < 32 {
					t.Errorf("%s: mean KL %.4f (≤ 0.03), max KL %.4f (≤ 0.2), top-1 %d/40 (≥ 32)", mode, a.MeanKL, a.MaxKL, a.Top1)
				}
			}
		})
	}
}

// CheckExact runs the reference models stems on exactly dequantized
// weights with float activations: for formats lossless on these ternary
// weights the logits must match the reference of the float file floatStem
// within 1e-3, in both modes.
func CheckExact(t *testing.T, floatStem string, stems ...string) {
	dir := testdata.Path(t, "reference")
	for _, stem := range stems {
		t.Run(stem, func(t *testing.T) {
			for _, mode := range []string{"batch", "sequential"} {
				a := run(t, filepath.Join(dir, stem+".gguf"), filepath.Join(dir, floatStem+"."+mode+".json"), mode, true)
				if a.MaxAbs > 1e-3 {
					t.Errorf("%s: max |Δ| = %g > 1e-3", mode, a.MaxAbs)
				}
			}
		})
	}
}

// Load loads the model at path with a float32 KV cache, as the reference
// runs had, and closes it at the end of the test.
func Load(t testing.TB, path string, exact bool) model.Model {
	t.Helper()
	m, err := model.Load(path, model.Options{Threads: 2, Exact: exact, CacheK: quant.F32, CacheV: quant.F32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// run computes the logits of the model at path for the ids of the
// reference file ref.
func run(t *testing.T, path, ref, mode string, exact bool) Agreement {
	t.Helper()
	m := Load(t, path, exact)
	want := Read(t, ref)
	got, err := model.ComputeLogits(m, want.IDs, mode)
	if err != nil {
		t.Fatal(err)
	}
	return Compare(want.Logits, got.Logits)
}

// Rel returns rms(got−ref)/std(ref) over all positions, the README's
// "rel" measure for models whose distributions are one-hot.
func Rel(ref, got [][]float32) float64 {
	var d2, s, s2, n float64
	for i := range ref {
		for j, r := range ref[i] {
			d := float64(got[i][j] - r)
			d2 += d * d
			s += float64(r)
			s2 += float64(r) * float64(r)
			n++
		}
	}
	mean := s / n
	return math.Sqrt(d2/n) / math.Sqrt(s2/n-mean*mean)
}

// kvBounds are the README's criteria for one cache-type file.
type kvBounds struct {
	meanKL, maxKL, rel, maxAbs float64
	top1                       int
}

// CheckKVCache decodes the 320 ids of each quantized-KV-cache reference
// file of stem (../shared/testdata/reference/STEM.kv-K-V[.norot].json) one
// at a time with the file's cache types and rotation, and checks the
// README's criteria: float caches (1), and for quantized ones the
// arithmetic of llama.cpp (3) and the quantization band (2), measured
// against the f32-cache file.
func CheckKVCache(t *testing.T, stem string) {
	dir := testdata.Path(t, "reference")
	path := filepath.Join(dir, stem+".gguf")
	if _, err := os.Stat(filepath.Join(dir, stem+".kv-f32-f32.json")); err != nil {
		t.Skipf("no quantized-KV-cache references for %s", stem)
	}
	oneHot := strings.HasPrefix(stem, "qwen3-")
	f32 := Read(t, filepath.Join(dir, stem+".kv-f32-f32.json"))
	type file struct {
		k, v   *quant.Format
		suffix string
		rot    bool
		bounds kvBounds
	}
	float := kvBounds{meanKL: 3e-6, maxKL: 2e-5, rel: 1.5e-3, maxAbs: 0.03, top1: 318}
	if oneHot {
		float.maxAbs = 0.2
	}
	q8 := kvBounds{meanKL: 1e-6, maxKL: 1e-4, rel: 5e-4, top1: 318}
	q4 := kvBounds{meanKL: 2e-5, maxKL: 2e-3, rel: 5e-4, top1: 318}
	var files []file
	files = append(files, file{quant.F32, quant.F32, "", false, float}, file{quant.F16, quant.F16, "", false, float})
	for _, p := range []struct {
		k, v *quant.Format
		b    kvBounds
	}{{quant.Q8_0, quant.Q8_0, q8}, {quant.Q4_0, quant.Q4_0, q4}, {quant.Q8_0, quant.Q4_0, q4}} {
		files = append(files, file{p.k, p.v, "", true, p.b}, file{p.k, p.v, ".norot", false, p.b})
	}
	for _, fl := range files {
		name := "kv-" + strings.ToLower(fl.k.Name) + "-" + strings.ToLower(fl.v.Name) + fl.suffix
		t.Run(name, func(t *testing.T) {
			ref := Read(t, filepath.Join(dir, stem+"."+name+".json"))
			m, err := model.Load(path, model.Options{Threads: 2, CacheK: fl.k, CacheV: fl.v, CacheNoRotate: !fl.rot})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			got, err := model.ComputeLogits(m, ref.IDs, "sequential")
			if err != nil {
				t.Fatal(err)
			}
			a := Compare(ref.Logits, got.Logits)
			rel := Rel(ref.Logits, got.Logits)
			t.Logf("against %s: mean KL %.3g, max KL %.3g, top-1 %d/%d, rel %.3g, max |Δ| %.3g", name, a.MeanKL, a.MaxKL, a.Top1, len(ref.IDs), rel, a.MaxAbs)
			b := fl.bounds
			if oneHot {
				if rel > b.rel || a.Top1 < b.top1 || (b.maxAbs > 0 && a.MaxAbs > b.maxAbs) {
					t.Errorf("rel %.3g (≤ %g), top-1 %d (≥ %d), max |Δ| %.3g (≤ %g)", rel, b.rel, a.Top1, b.top1, a.MaxAbs, b.maxAbs)
				}
			} else if a.MeanKL > b.meanKL || a.MaxKL > b.maxKL || a.Top1 < b.top1 || (b.maxAbs > 0 && (a.MaxAbs > b.maxAbs || rel > b.rel)) {
				t.Errorf("mean KL %.3g (≤ %g), max KL %.3g (≤ %g), top-1 %d (≥ %d), rel %.3g, max |Δ| %.3g", a.MeanKL, b.meanKL, a.MaxKL, b.maxKL, a.Top1, b.top1, rel, a.MaxAbs)
			}
			if !kvQuantized(fl.k) && !kvQuantized(fl.v) {
				if fl.k == quant.F32 {
					nofa := Read(t, filepath.Join(dir, stem+".kv-f32-f32.nofa.json"))
					if d := Compare(nofa.Logits, got.Logits).MaxAbs; d > 1e-3 {
						t.Errorf("f32 cache: max |Δ| %.3g against the non-flash f32 file (≤ 1e-3)", d)
					}
				}
				return
			}
			// The quantization band: our cost of quantizing, against the
			// f32 file, within 0.25×–4× of llama.cpp's own.
			ours, theirs := Compare(f32.Logits, got.Logits), Compare(f32.Logits, ref.Logits)
			x, y := ours.MeanKL, theirs.MeanKL
			if oneHot {
				x, y = Rel(f32.Logits, got.Logits), Rel(f32.Logits, ref.Logits)
			}
			t.Logf("quantization cost: ours %.3g, llama.cpp %.3g (ratio %.2f)", x, y, x/y)
			if x < 0.25*y || x > 4*y {
				t.Errorf("quantization cost %.3g is outside 0.25×–4× of llama.cpp's %.3g", x, y)
			}
		})
	}
}

func kvQuantized(f *quant.Format) bool { return f == quant.Q8_0 || f == quant.Q4_0 }

// CheckKVCacheLong runs a long deterministic random prompt (n ids, in one
// batch, then 8 decoded tokens) through stem with f32, q8_0 and q4_0
// caches and checks the accuracy bounds against the f32 cache:
// mean KL ≤ 0.005 for q8_0 and ≤ 0.05 for q4_0 over the decoded tokens and
// the last 8 prompt positions.
func CheckKVCacheLong(t *testing.T, stem string, n int) {
	dir := testdata.Path(t, "reference")
	path := filepath.Join(dir, stem+".gguf")
	ids := make([]int, n+8)
	x := uint32(20261201)
	for i := range ids {
		x = 1103515245*x + 12345
		ids[i] = int(x>>16) % 512
	}
	logits := func(f *quant.Format) [][]float32 {
		m, err := model.Load(path, model.Options{Threads: 2, CacheK: f, CacheV: f})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		vocab := m.Info().Vocab
		st, err := m.NewState(len(ids))
		if err != nil {
			t.Fatal(err)
		}
		all := make([]float32, n*vocab)
		if err := m.Forward([]model.Step{{State: st, Tokens: ids[:n], Logits: all, All: true}}); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for i := n - 8; i < n; i++ {
			out = append(out, all[i*vocab:(i+1)*vocab])
		}
		for _, id := range ids[n:] {
			l := make([]float32, vocab)
			if err := m.Forward([]model.Step{{State: st, Tokens: []int{id}, Logits: l}}); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		return out
	}
	base := logits(quant.F32)
	for _, c := range []struct {
		f     *quant.Format
		bound float64
	}{{quant.Q8_0, 0.005}, {quant.Q4_0, 0.05}} {
		a := Compare(base, logits(c.f))
		t.Logf("%s, %d-token prompt, %v cache against f32: mean KL %.3g, max KL %.3g, top-1 %d/16", stem, n, c.f, a.MeanKL, a.MaxKL, a.Top1)
		if a.MeanKL > c.bound {
			t.Errorf("%v cache: mean KL %.3g > %g against the f32 cache", c.f, a.MeanKL, c.bound)
		}
	}
}
