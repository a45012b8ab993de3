//go:build amd64 && !purego

package ops

import "trit/internal/cpu"

// Assembly kernels (kernels_amd64.s); they process whole vectors only.

//go:noescape
func dotAVX2(a, b []float32) float32

//go:noescape
func dotAVX512(a, b []float32) float32

//go:noescape
func axpyAVX2(dst []float32, alpha float32, x []float32)

//go:noescape
func axpyAVX512(dst []float32, alpha float32, x []float32)

//go:noescape
func scaleAVX2(x []float32, s float32)

//go:noescape
func addAVX2(dst, a, b []float32)

//go:noescape
func mulAVX2(dst, a, b []float32)

//go:noescape
func fwht8AVX2(x []float32)

//go:noescape
func fwhtStageAVX2(x []float32, h int)

//go:noescape
func f16ToF32F16C(dst []float32, src []byte)

//go:noescape
func bf16ToF32AVX2(dst []float32, src []byte)

//go:noescape
func f32ToF16F16C(dst []byte, src []float32)

//go:noescape
func expSubSumAVX2(x []float32, m float32) float64

//go:noescape
func sumSquaresAVX2(x []float32) float64

//go:noescape
func maxAVX2(x []float32) float32

//go:noescape
func sigmoidAVX2(dst, x []float32)

//go:noescape
func siluAVX2(dst, x []float32)

//go:noescape
func swigluAVX2(dst, gate, up []float32)

var avx2Kernels = kernelSet{
	name:      "avx2",
	tier:      cpu.AVX2,
	dot:       dotAVX2Tail,
	axpy:      axpyAVX2Tail,
	scale:     scaleAVX2Tail,
	add:       addAVX2Tail,
	mul:       mulAVX2Tail,
	fwht8:     fwht8AVX2,
	fwhtStage: fwhtStageAVX2,
	f16ToF32:  f16ToF32F16CTail,
	f32ToF16:  f32ToF16F16CTail,
	bf16ToF32: bf16ToF32AVX2Tail,
	max:       maxAVX2Tail,
	sumSq:     sumSquaresAVX2Tail,
	expSubSum: expSubSumAVX2Tail,
	sigmoid:   sigmoidAVX2Tail,
	silu:      siluAVX2Tail,
	swiglu:    swigluAVX2Tail,
}

// avx512Kernels uses 512-bit vectors for the attention inner loops Dot and
// Axpy and the AVX2 kernels elsewhere. CPUs with full-width 512-bit units
// gain on long rows; AMD Zen 4, which splits each 512-bit operation in two,
// runs them at AVX2 speed.
var avx512Kernels = func() kernelSet {
	k := avx2Kernels
	k.name, k.tier = "avx512", cpu.AVX512
	k.dot = dotAVX512Tail
	k.axpy = axpyAVX512Tail
	return k
}()

// kernelSets lists the implementations this CPU supports, best first: the
// tiers of package cpu (the AVX2 set needs AVX2 with FMA and F16C).
var kernelSets = func() []*kernelSet {
	var sets []*kernelSet
	if cpu.HW >= cpu.AVX512 {
		sets = append(sets, &avx512Kernels)
	}
	if cpu.HW >= cpu.AVX2 {
		sets = append(sets, &avx2Kernels)
	}
	return append(sets, &genericKernels)
}()

// fwht8AVX2 and fwhtStageAVX2 are used as they are: fwht passes them a
// power-of-two length ≥ 8 and strides h ≥ 8, all the assembly needs.

// The wrappers below run the assembly on the largest whole-vector prefix
// and finish the tail in Go.

func dotAVX2Tail(a, b []float32) float32 {
	n := len(a) &^ 7
	s := dotAVX2(a[:n], b[:n])
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

func dotAVX512Tail(a, b []float32) float32 {
	n := len(a) &^ 7
	s := dotAVX512(a[:n], b[:n])
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

// The Axpy wrappers run the tail through the assembly too, padded to a
// vector: its fused multiply-adds round once where Go's rounds twice, and
// an element must get the same bits wherever it lies in the slice (so a
// batch computes each row as it would alone).

func axpyAVX2Tail(dst []float32, alpha float32, x []float32) {
	n := len(dst) &^ 7
	axpyAVX2(dst[:n], alpha, x[:n])
	axpyPadded(axpyAVX2, dst[n:], alpha, x[n:])
}

func axpyAVX512Tail(dst []float32, alpha float32, x []float32) {
	n := len(dst) &^ 7
	axpyAVX512(dst[:n], alpha, x[:n])
	axpyPadded(axpyAVX2, dst[n:], alpha, x[n:])
}

// axpyPadded runs kernel k on the up to 7 elements of dst and x in a
// vector of 8.
func axpyPadded(k func(dst []float32, alpha float32, x []float32), dst []float32, alpha float32, x []float32) {
	if len(dst) == 0 {
		return
	}
	var d, v [8]float32
	copy(d[:], dst)
	copy(v[:], x)
	k(d[:], alpha, v[:])
	copy(dst, d[:len(dst)])
}

func scaleAVX2Tail(x []float32, s float32) {
	n := len(x) &^ 7
	scaleAVX2(x[:n], s)
	scaleGeneric(x[n:], s)
}

func addAVX2Tail(dst, a, b []float32) {
	n := len(dst) &^ 7
	addAVX2(dst[:n], a[:n], b[:n])
	addGeneric(dst[n:], a[n:], b[n:])
}

func mulAVX2Tail(dst, a, b []float32) {
	n := len(dst) &^ 7
	mulAVX2(dst[:n], a[:n], b[:n])
	mulGeneric(dst[n:], a[n:], b[n:])
}

func f16ToF32F16CTail(dst []float32, src []byte) {
	n := len(dst) &^ 7
	f16ToF32F16C(dst[:n], src[:2*n])
	f16ToF32Generic(dst[n:], src[2*n:])
}

func bf16ToF32AVX2Tail(dst []float32, src []byte) {
	n := len(dst) &^ 7
	bf16ToF32AVX2(dst[:n], src[:2*n])
	bf16ToF32Generic(dst[n:], src[2*n:])
}

func f32ToF16F16CTail(dst []byte, src []float32) {
	n := len(src) &^ 7
	f32ToF16F16C(dst[:2*n], src[:n])
	f32ToF16Generic(dst[2*n:], src[n:])
}

func expSubSumAVX2Tail(x []float32, m float32) float64 {
	n := len(x) &^ 7
	return expSubSumAVX2(x[:n], m) + expSubSumGeneric(x[n:], m)
}

func sumSquaresAVX2Tail(x []float32) float64 {
	n := len(x) &^ 7
	return sumSquaresAVX2(x[:n]) + sumSquaresGeneric(x[n:])
}

func maxAVX2Tail(x []float32) float32 {
	n := len(x) &^ 7
	return max(maxAVX2(x[:n]), maxGeneric(x[n:]))
}

func sigmoidAVX2Tail(dst, x []float32) {
	n := len(dst) &^ 7
	sigmoidAVX2(dst[:n], x[:n])
	sigmoidGeneric(dst[n:], x[n:])
}

func siluAVX2Tail(dst, x []float32) {
	n := len(dst) &^ 7
	siluAVX2(dst[:n], x[:n])
	siluGeneric(dst[n:], x[n:])
}

func swigluAVX2Tail(dst, gate, up []float32) {
	n := len(dst) &^ 7
	swigluAVX2(dst[:n], gate[:n], up[:n])
	swigluGeneric(dst[n:], gate[n:], up[n:])
}
