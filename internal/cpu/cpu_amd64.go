//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

// detect picks the best tier the CPU runs. Both SIMD tiers convert fp16
// with F16C and accumulate with FMA. The AVX-512 kernels also move bytes
// with VBMI's permutes and unpack codes with GFNI's GF2P8AFFINEQB: every
// CPU with VNNI has both except Cascade Lake, which gets the AVX2 tier.
func detect() int {
	x := cpu.X86
	base := x.HasAVX2 && x.HasFMA && x.HasF16C
	switch {
	case base && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI && x.HasAVX512VBMI && x.HasAVX512GFNI:
		return AVX512
	case base:
		return AVX2
	}
	return Generic
}
