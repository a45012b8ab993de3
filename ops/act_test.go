package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// closeULP reports whether got is within n float32 ulps (of want's
// magnitude) of want, or both are ±0 / tiny.
func closeULP(got float32, want float64, n float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(float64(got))
	}
	if float64(got) == want {
		return true // also ±Inf
	}
	return math.Abs(float64(got)-want) <= n*u32*2*math.Abs(want)+1e-37
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
		{0, -80, -85, -87, -87.5, -88, -90, -200, inf, 3},
		randVec(r, 333),
		randVec(r, 4096),
	}
	forEachKernelSet(t, func(t *testing.T) {
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
				if !closeULP(got[i], want[i]/sum, 4) {
					t.Fatalf("Softmax(%v)[%d] = %v, want %v", x[:min(len(x), 5)], i, got[i], want[i]/sum)
				}
			}
			if math.Abs(total-1) > 1e-5 {
				t.Fatalf("Softmax sums to %v", total)
			}
		}
		Softmax(nil)
	})
}

func TestMax(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		if got := active.max(nil); !math.IsInf(float64(got), -1) {
			t.Errorf("max of nothing = %v, want -Inf", got)
		}
		for _, n := range testLengths[1:] {
			x := make([]float32, n)
			for i := range x {
				x[i] = -float32(i%5) - 1
			}
			for _, at := range []int{0, n / 2, n - 1} {
				x[at] = 7
				if got := active.max(x); got != 7 {
					t.Fatalf("n=%d, max at %d: got %v", n, at, got)
				}
				x[at] = -1
			}
		}
	})
}

func TestSoftmaxNaN(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		for _, x := range [][]float32{
			{float32(math.Inf(-1)), float32(math.Inf(-1))},
			{1, 2, float32(math.NaN()), 3, 4, 5, 6, 7, 8, 9, 10},
			{float32(math.NaN()), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		} {
			Softmax(x)
			for i, v := range x {
				if v == v {
					t.Fatalf("Softmax result [%d] = %v, want NaN", i, v)
				}
			}
		}
	})
}

func TestActivations(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	x := []float32{-100, -20.5, -3, -1, -1e-3, 0, 1e-3, 0.5, 1, 3, 19.9, 20, 20.5, 100,
		-88, -87.5, -87, 87, 88, 89, float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 1000 {
		x = append(x, float32(r.NormFloat64()*6))
	}
	n := len(x)
	up := randVec(r, n)
	forEachKernelSet(t, func(t *testing.T) {
		sig, silu, sp, glu := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		Sigmoid(sig, x)
		SiLU(silu, x)
		Softplus(sp, x)
		SwiGLU(glu, x, up)
		for i, v := range x {
			f := float64(v)
			s := 1 / (1 + math.Exp(-f))
			wantSiLU := f * s
			if math.IsInf(f, -1) {
				wantSiLU = math.NaN() // −Inf/+Inf, as in ggml
			}
			wantSP := math.Log1p(math.Exp(f))
			if f > 20 {
				wantSP = f // ggml's shortcut, identical in float32
			}
			switch {
			case !closeULP(sig[i], s, 3):
				t.Fatalf("Sigmoid(%v) = %v, want %v", v, sig[i], s)
			case !closeULP(silu[i], wantSiLU, 3):
				t.Fatalf("SiLU(%v) = %v, want %v", v, silu[i], wantSiLU)
			case !closeULP(sp[i], wantSP, 1):
				t.Fatalf("Softplus(%v) = %v, want %v", v, sp[i], wantSP)
			case !closeULP(glu[i], wantSiLU*float64(up[i]), 4):
				t.Fatalf("SwiGLU(%v, %v) = %v, want %v", v, up[i], glu[i], wantSiLU*float64(up[i]))
			}
		}
		// In place, dst aliasing an input.
		y := append([]float32(nil), x...)
		z := append([]float32(nil), x...)
		SwiGLU(y, y, up)
		SiLU(z, z)
		for i := range x {
			if !sameFloat(z[i], silu[i]) || !sameFloat(y[i], glu[i]) {
				t.Fatalf("in-place results differ at %d", i)
			}
		}
	})
}

func sameFloat(a, b float32) bool {
	return a == b || (a != a && b != b)
}
