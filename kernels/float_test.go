package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// TestFloatTails runs the float formats, whose rows may have any length,
// on every tier at lengths that leave a rest after the SIMD kernels' steps
// of 32 and 8 elements (TestTiers uses multiples of 32 only).
func TestFloatTails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := NewPool(2)
	defer p.Close()
	for _, f := range []*quant.Format{quant.F32, quant.F16, quant.BF16} {
		for _, cols := range []int{1, 7, 8, 15, 40, 61, 103} {
			testTiers(t, p, f, cols, rng)
		}
	}
}

// TestF32Identical checks that every tier's F32 kernel gives the generic
// kernel's bits, which the model's batched and sequential passes rely on.
func TestF32Identical(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPool(2)
	defer p.Close()
	for _, cols := range []int{3, 4, 17, 64, 1030} {
		w := randMatrix(t, quant.F32, 9, cols, rng)
		x := randActs(2, cols, rng)
		var want []float32
		for _, name := range tiers() {
			restore, err := useTier(name)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, 2*w.Rows)
			p.MatMul(got, w, x, 2)
			restore()
			if want == nil {
				want = got
				continue
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("cols %d tier %s [%d]: got %g, first tier %g", cols, name, i, got[i], want[i])
				}
			}
		}
	}
}
