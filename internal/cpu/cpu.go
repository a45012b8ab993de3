// Package cpu chooses the SIMD tier that the kernels and ops packages run:
// the best one this CPU and build support, lowered by the environment
// variable TRIT_CPU=generic|avx2|avx512. Both packages read the same
// choice, so one setting selects every code path of a run.
package cpu

import "os"

// The tiers, lowest first.
const (
	Generic = iota // portable Go
	AVX2           // AVX2 with FMA and F16C
	AVX512         // AVX-512 F/BW/VL with VNNI, VBMI and GFNI
	NumTiers
)

var names = [NumTiers]string{"generic", "avx2", "avx512"}

// Name returns the name of tier t ("generic", "avx2" or "avx512").
func Name(t int) string { return names[t] }

// Lookup returns the tier called name, or false.
func Lookup(name string) (int, bool) {
	for t, n := range names {
		if n == name {
			return t, true
		}
	}
	return 0, false
}

// HW is the best tier this CPU and build support; Tier is the one in use.
var (
	HW   = detect()
	Tier = FromEnv(os.Getenv("TRIT_CPU"), HW)
)

// FromEnv applies a TRIT_CPU value v to the hardware tier hw: a tier name
// lowers the tier to it (never above hw); anything else leaves hw.
func FromEnv(v string, hw int) int {
	if t, ok := Lookup(v); ok {
		return min(t, hw)
	}
	return hw
}
