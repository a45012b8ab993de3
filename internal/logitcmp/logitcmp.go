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
	m, err := model.Load(path, model.Options{Threads: 2, Exact: exact, KVType: model.KVF32})
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
