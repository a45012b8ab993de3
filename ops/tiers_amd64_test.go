//go:build amd64 && !purego

package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotTiers checks that Dot gives the same bits at the AVX2 and AVX-512
// tiers (the AVX2 kernel keeps the AVX-512 one's sums in halves), so
// TRIT_CPU=avx2 reproduces an AVX-512 machine's attention scores.
func TestDotTiers(t *testing.T) {
	if len(kernelSets) < 3 {
		t.Skip("this CPU lacks the AVX-512 set")
	}
	rng := rand.New(rand.NewPCG(33, 34))
	for _, n := range testLengths {
		a, b := randVec(rng, n), randVec(rng, n)
		x, y := avx2Kernels.dot(a, b), avx512Kernels.dot(a, b)
		if math.Float32bits(x) != math.Float32bits(y) {
			t.Fatalf("n=%d: AVX2 %g, AVX-512 %g", n, x, y)
		}
	}
}
