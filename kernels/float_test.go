package kernels

import (
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
