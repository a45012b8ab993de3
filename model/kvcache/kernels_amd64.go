//go:build !purego

package kvcache

import (
	"golang.org/x/sys/cpu"

	"trit/kernels"
	"trit/quant"
)

//go:noescape
func dotsTF32AVX512(dst []float32, q []float32, kt []byte)

//go:noescape
func dotsT256F16AVX512(dst []float32, q []float32, kt []byte)

//go:noescape
func accF16x128AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func accF32x128AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func maxAVX512(x []float32) float32

//go:noescape
func dotsT4F32AVX512(dst []float32, q []float32, kt []byte, m int)

// dotsT4 sets dst[r·PageSize+j] = q_r·K_j for four query rows (q holds
// them one after another) and the first m keys (a multiple of 64) of a
// transposed float32 region.
func dotsT4(dst, q []float32, kt []byte, m int) {
	hd := len(q) / 4
	if m%64 != 0 || m > PageSize || len(dst) < 4*PageSize || len(kt) < hd*PageSize*4 {
		panic("kvcache: dotsT4: bad lengths")
	}
	dotsT4F32AVX512(dst, q, kt, m)
}

// Max returns the largest of x (len(x) ≥ 1, no NaNs).
func Max(x []float32) float32 {
	n := len(x) &^ 15
	if !simd || n == 0 {
		return maxGo(x)
	}
	m := maxAVX512(x[:n])
	for _, v := range x[n:] {
		m = max(m, v)
	}
	return m
}

//go:noescape
func accF16AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func accF32AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func accQ8AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func accQ4AVX512(acc []float32, p []float32, v []byte)

//go:noescape
func dotsQ8AVX512(dst []float32, q []byte, d []float32, corr []int32, k []byte)

//go:noescape
func dotsQ4AVX512(dst []float32, q []byte, d []float32, corr []int32, k []byte)

// hasAVX512 is whether this CPU runs the AVX-512 kernels; they follow the
// kernel tier (TRIT_CPU) of package kernels.
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512VNNI && kernels.Tier() == "avx512"

// simd is whether the assembly kernels are in use (tests switch it).
var simd = hasAVX512

// fast reports whether the assembly kernels take rows of head dim hd.
func fast(hd int) bool { return simd && hd%64 == 0 }

// dotsT sets dst[j] = q·K_j for the keys of a transposed page region kt
// of format f; len(dst) is a multiple of 128, at most PageSize, and for
// fp16 dst has room for a whole page.
func dotsT(f *quant.Format, dst, q []float32, kt []byte) {
	if len(dst)%128 != 0 || len(dst) > PageSize || f == quant.F16 && cap(dst) < PageSize || len(kt) < len(q)*PageSize*f.BlockBytes {
		panic("kvcache: dotsT: bad lengths")
	}
	if f == quant.F16 {
		// fp16 pages are scored whole, in one front-to-back pass: the
		// keys past len(dst) cost less than a second pass would.
		dotsT256F16AVX512(dst[:PageSize:PageSize], q, kt)
		return
	}
	dotsTF32AVX512(dst, q, kt)
}

func dotsQ8(dst []float32, q *Query, k []byte, blocks int) {
	if !simd {
		dotsQ8Go(dst, q.Q8, k, blocks)
		return
	}
	dotsQ8AVX512(dst, q.Q8, q.D[:blocks], q.Corr[:blocks], k[:34*blocks*len(dst)])
}

func dotsQ4(dst []float32, q *Query, k []byte, blocks int) {
	if !simd {
		dotsQ4Go(dst, q.Q8, k, blocks)
		return
	}
	dotsQ4AVX512(dst, q.Q8, q.D[:blocks], q.Corr[:blocks], k[:18*blocks*len(dst)])
}

// accumulate sets acc = Σ_j p[j]·V_j for the rows v of format f.
func accumulate(f *quant.Format, acc, p []float32, v []byte) {
	hd := len(acc)
	switch f {
	case quant.F16:
		if hd == 128 {
			accF16x128AVX512(acc, p, v[:2*hd*len(p)])
			return
		}
		accF16AVX512(acc, p, v[:2*hd*len(p)])
	case quant.F32:
		if hd == 128 {
			accF32x128AVX512(acc, p, v[:4*hd*len(p)])
			return
		}
		accF32AVX512(acc, p, v[:4*hd*len(p)])
	case quant.Q8_0:
		accQ8AVX512(acc, p, v[:hd/32*34*len(p)])
	case quant.Q4_0:
		accQ4AVX512(acc, p, v[:hd/32*18*len(p)])
	default:
		panic("kvcache: no accumulate kernel for " + f.Name)
	}
}

// setSIMD switches the assembly kernels on (where the CPU has them) or
// off, for tests.
func setSIMD(on bool) { simd = on && hasAVX512 }
