package llama_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trit/internal/testdata"
	"trit/model"
	_ "trit/model/llama"
)

// refLogits reads a reference logits file of ../shared/testdata/reference.
func refLogits(t *testing.T, path string) *model.LogitsDump {
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

// Agreement compares logits per position: the largest absolute difference,
// KL(ref ‖ got) of the softmax distributions, and top-1 agreement.
type agreement struct {
	maxAbs        float64
	meanKL, maxKL float64
	top1          int
}

func compare(ref, got [][]float32) agreement {
	var a agreement
	for i := range ref {
		r, g := ref[i], got[i]
		for j := range r {
			a.maxAbs = max(a.maxAbs, math.Abs(float64(r[j]-g[j])))
		}
		kl := klDiv(r, g)
		a.meanKL += kl / float64(len(ref))
		a.maxKL = max(a.maxKL, kl)
		if argmax(r) == argmax(g) {
			a.top1++
		}
	}
	return a
}

func logSoftmax(x []float32) []float64 {
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
	lp, lq := logSoftmax(p), logSoftmax(q)
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

// TestReferenceLogits checks every qwen3 model of the reference set against
// the logits llama.cpp computed, in batch and token-by-token mode, with the
// criteria of the reference README.
func TestReferenceLogits(t *testing.T) {
	dir := testdata.Path(t, "reference")
	files, _ := filepath.Glob(filepath.Join(dir, "qwen3-*.gguf"))
	if len(files) == 0 {
		t.Skip("no qwen3 reference models")
	}
	for _, path := range files {
		stem := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(stem, func(t *testing.T) {
			m, err := model.Load(path, model.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, mode := range []string{"batch", "sequential"} {
				ref := refLogits(t, filepath.Join(dir, stem+"."+mode+".json"))
				got, err := model.ComputeLogits(m, ref.IDs, mode)
				if err != nil {
					t.Fatal(err)
				}
				a := compare(ref.Logits, got.Logits)
				t.Logf("%s: max |Δ| %.2e, mean KL %.4f, max KL %.4f, top-1 %d/%d", mode, a.maxAbs, a.meanKL, a.maxKL, a.top1, len(ref.IDs))
				if strings.HasSuffix(stem, "-f32") {
					if a.maxAbs > 1e-3 {
						t.Errorf("%s: max |Δ| = %g > 1e-3", mode, a.maxAbs)
					}
					continue
				}
				if a.meanKL > 0.03 || a.maxKL > 0.2 || a.top1 < 32 {
					t.Errorf("%s: mean KL %.4f (≤ 0.03), max KL %.4f (≤ 0.2), top-1 %d/40 (≥ 32)", mode, a.meanKL, a.maxKL, a.top1)
				}
			}
		})
	}
}

// TestExactPathMatchesFloat runs the group-64 and group-128 Q2_0 files on
// exactly dequantized weights with float activations: Q2_0 is lossless for
// these ternary weights, so the logits must match the float file's
// reference within 1e-3.
func TestExactPathMatchesFloat(t *testing.T) {
	dir := testdata.Path(t, "reference")
	for _, stem := range []string{"qwen3-tern-Q2_0", "qwen3-tern-Q2_0g128"} {
		t.Run(stem, func(t *testing.T) {
			m, err := model.Load(filepath.Join(dir, stem+".gguf"), model.Options{Threads: 2, Exact: true})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ref := refLogits(t, filepath.Join(dir, "qwen3-tern-f32.batch.json"))
			got, err := model.ComputeLogits(m, ref.IDs, "batch")
			if err != nil {
				t.Fatal(err)
			}
			if a := compare(ref.Logits, got.Logits); a.maxAbs > 1e-3 {
				t.Errorf("max |Δ| = %g > 1e-3", a.maxAbs)
			}
		})
	}
}
