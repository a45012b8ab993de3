package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	forEachKernelSet(t, func(t *testing.T) { testRMSNorm(t, r) })
}

func testRMSNorm(t *testing.T, r *rand.Rand) {
	for _, n := range []int{1, 3, 8, 15, 16, 17, 64, 255, 5120} {
		x, w := randVec(r, n), randVec(r, n)
		for _, weight := range [][]float32{nil, w} {
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			scale := 1 / math.Sqrt(ss/float64(n)+1e-6)
			got := make([]float32, n)
			RMSNorm(got, x, weight, 1e-6)
			for i := range got {
				want := float64(x[i]) * scale
				if weight != nil {
					want *= float64(weight[i])
				}
				if math.Abs(float64(got[i])-want) > 4*u32*math.Abs(want)+1e-30 {
					t.Fatalf("n=%d: [%d] = %v, want %v", n, i, got[i], want)
				}
			}
		}
	}
}

func TestRMSNormValues(t *testing.T) {
	x := []float32{1, 2, 3, 4} // mean of squares 7.5
	RMSNorm(x, x, []float32{1, 1, 2, -1}, 0.5)
	want := []float32{1 / 2.828427, 2 / 2.828427, 2 * 3 / 2.828427, -4 / 2.828427}
	for i := range x {
		if math.Abs(float64(x[i]-want[i])) > 1e-6 {
			t.Errorf("[%d] = %v, want %v", i, x[i], want[i])
		}
	}
	RMSNorm(nil, nil, nil, 1e-6) // empty rows are allowed
}

func TestL2Norm(t *testing.T) {
	forEachKernelSet(t, testL2Norm)
}

func testL2Norm(t *testing.T) {
	tests := []struct {
		x, want []float32
		eps     float32
	}{
		{[]float32{3, 4}, []float32{0.6, 0.8}, 1e-6},
		// eps floors the norm: a tiny vector is divided by eps, not by ‖x‖.
		{[]float32{1e-8, 0}, []float32{0.01, 0}, 1e-6},
		{[]float32{0, 0, 0}, []float32{0, 0, 0}, 1e-6},
		{[]float32{}, []float32{}, 1e-6},
		{[]float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 2}, // √(16+72+4) = √92
			[]float32{.10426, .10426, .10426, .10426, .10426, .10426, .10426, .10426, .10426, .10426, .10426, .10426,
				.10426, .10426, .10426, .10426, .31277, .31277, .31277, .31277, .31277, .31277, .31277, .31277, .20851}, 1e-6},
	}
	for _, tt := range tests {
		got := make([]float32, len(tt.x))
		L2Norm(got, tt.x, tt.eps)
		for i := range got {
			if math.Abs(float64(got[i]-tt.want[i])) > 1e-5 {
				t.Errorf("L2Norm(%v) = %v, want %v", tt.x, got, tt.want)
				break
			}
		}
	}
}
