package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

func closeRel(got float32, want float64) bool {
	return math.Abs(float64(got)-want) <= 2*u32*math.Abs(want)+1e-40
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	inf := float32(math.Inf(-1))
	cases := [][]float32{
		{0},
		{1, 2, 3},
		{1000, 1001, 999},    // would overflow without the max subtraction
		{inf, 0, inf, 1},     // masked entries
		{-1e30, 0, 5, -7, 2}, // extreme spread
		randVec(r, 333),
	}
	for _, x := range cases {
		m := math.Inf(-1)
		for _, v := range x {
			m = math.Max(m, float64(v))
		}
		want := make([]float64, len(x))
		var sum float64
		for i, v := range x {
			want[i] = math.Exp(float64(v) - m)
			sum += want[i]
		}
		got := append([]float32(nil), x...)
		Softmax(got)
		var total float64
		for i := range got {
			total += float64(got[i])
			if !closeRel(got[i], want[i]/sum) && math.Abs(float64(got[i])-want[i]/sum) > 1e-7 {
				t.Fatalf("Softmax(%v)[%d] = %v, want %v", x[:min(len(x), 5)], i, got[i], want[i]/sum)
			}
		}
		if math.Abs(total-1) > 1e-5 {
			t.Fatalf("Softmax sums to %v", total)
		}
	}
	Softmax(nil)
}

func TestActivations(t *testing.T) {
	x := []float32{-100, -20.5, -3, -1, -1e-3, 0, 1e-3, 0.5, 1, 3, 19.9, 20, 20.5, 100}
	n := len(x)
	sig, silu, sp, glu := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	up := make([]float32, n)
	for i := range up {
		up[i] = float32(i) - 4
	}
	Sigmoid(sig, x)
	SiLU(silu, x)
	Softplus(sp, x)
	SwiGLU(glu, x, up)
	for i, v := range x {
		f := float64(v)
		s := 1 / (1 + math.Exp(-f))
		wantSP := math.Log1p(math.Exp(f))
		if f > 20 {
			wantSP = f // ggml's shortcut, identical in float32
		}
		switch {
		case !closeRel(sig[i], s):
			t.Errorf("Sigmoid(%v) = %v, want %v", v, sig[i], s)
		case !closeRel(silu[i], f*s):
			t.Errorf("SiLU(%v) = %v, want %v", v, silu[i], f*s)
		case !closeRel(sp[i], wantSP):
			t.Errorf("Softplus(%v) = %v, want %v", v, sp[i], wantSP)
		case !closeRel(glu[i], float64(float32(f*s))*float64(up[i])):
			t.Errorf("SwiGLU(%v, %v) = %v, want %v", v, up[i], glu[i], f*s*float64(up[i]))
		}
	}
	// In place, dst aliasing an input.
	y := append([]float32(nil), x...)
	SwiGLU(y, y, up)
	SiLU(x, x)
	for i := range x {
		if x[i] != silu[i] || y[i] != glu[i] {
			t.Fatalf("in-place results differ at %d", i)
		}
	}
}
