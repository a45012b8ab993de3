package kernels

import (
	"fmt"
	"os"

	"trit/quant"
)

// The kernel tiers, lowest first.
const (
	tierGeneric = iota
	tierAVX2
	tierAVX512
	numTiers
)

var tierNames = [numTiers]string{"generic", "avx2", "avx512"}

// hwTier is the best tier this CPU and build support; tier is the one in
// use (TRIT_CPU may lower it).
var (
	hwTier = detectTier()
	tier   = envTier(os.Getenv("TRIT_CPU"), hwTier)
)

// envTier applies a TRIT_CPU value: a known tier name lowers the tier to
// it (never raises it above what the hardware has); anything else is ignored.
func envTier(v string, hw int) int {
	for t, name := range tierNames {
		if v == name {
			return min(t, hw)
		}
	}
	return hw
}

// Tier returns the name of the kernel tier in use: "generic", "avx2" or
// "avx512".
func Tier() string { return tierNames[tier] }

// useTier switches the tier (tests cover every tier in one run this way)
// and returns a function that restores the previous one. It fails for a
// tier the machine lacks.
func useTier(name string) (restore func(), err error) {
	for t, n := range tierNames {
		if n == name {
			if t > hwTier {
				return nil, fmt.Errorf("kernels: tier %s not available (have %s)", name, tierNames[hwTier])
			}
			old := tier
			tier = t
			return func() { tier = old }, nil
		}
	}
	return nil, fmt.Errorf("kernels: unknown tier %q", name)
}

// dotFn returns Σ_j W[j]·x[j] for one packed row and activation row i.
type dotFn func(w []byte, a *Acts, i int) float32

// kernel is one format's implementations by tier; a nil entry falls back
// to the next lower tier. gemm, where present, serves n > 1 at that tier.
// Formats with a swar kernel use it instead of dot in the generic tier.
type kernel struct {
	dot   [numTiers]dotFn
	swar  *swarKernel
	float bool    // float activations (F32, F16, BF16)
	act   actKind // the int8 activations (llama.cpp's vec_dot_type)
	// planes[t]: dot[t] reads this plane layout (preparePlanes) instead
	// of the SIMD one.
	planes [numTiers]planeLayout
	gemm   [numTiers]gemmKernel // serves n > 1 at that tier (see gemm.go)
}

// pick returns the implementation for tier t and the tier it belongs to
// (lower than t where t has none).
func (k *kernel) pick(t int) (dotFn, int) {
	for ; t > tierGeneric; t-- {
		if k.dot[t] != nil {
			return k.dot[t], t
		}
	}
	return k.dot[tierGeneric], tierGeneric
}

var kernelTable = map[*quant.Format]*kernel{
	quant.F32:     {dot: [numTiers]dotFn{dotF32Go}, float: true},
	quant.F16:     {dot: [numTiers]dotFn{dotF16Go}, float: true},
	quant.BF16:    {dot: [numTiers]dotFn{dotBF16Go}, float: true},
	quant.Q8_0:    {dot: [numTiers]dotFn{dotQ8_0Go}},
	quant.Q4_0:    {dot: [numTiers]dotFn{dotQ4_0Go}},
	quant.Q4_K:    {dot: [numTiers]dotFn{dotQ4_KGo}, act: actQ8_K},
	quant.Q6_K:    {dot: [numTiers]dotFn{dotQ6_KGo}, act: actQ8_K},
	quant.TQ1_0:   {swar: swarTQ1_0, act: actQ8_K},
	quant.TQ2_0:   {swar: swarTQ2_0, act: actQ8_K},
	quant.Q1_0:    {swar: swarQ1_0},
	quant.Q2_0:    {swar: swarQ2_0},
	quant.PQ2_0:   {swar: swarQ2_0},
	quant.Q2_0g64: {swar: swarQ2_0g64},
	quant.PTQ1_0:  {swar: swarPTQ1_0},
}

// kernelsFor returns the kernels of format f, or nil.
func kernelsFor(f *quant.Format) *kernel { return kernelTable[f] }
