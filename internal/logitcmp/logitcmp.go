// Package logitcmp compares logits with reference logits, with the
// measures of ../shared/testdata/reference/README.md.
package logitcmp

import (
	"encoding/json"
	"math"
	"os"
	"testing"

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
