package ops

import "trit/internal/cpu"

// Dot returns Σ a[i]·b[i]. It panics if len(a) != len(b).
//
// The sum is accumulated in float32 in several interleaved partial sums
// (and with fused multiply-adds on the assembly paths), so its rounding
// differs from a sequential float32 loop; like any float32 summation the
// error is at most about len(a)·2⁻²⁴·Σ|a[i]·b[i]|, and typically far less.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("ops: Dot: lengths differ")
	}
	return active.dot(a, b)
}

// Axpy sets dst[i] += alpha·x[i]. It panics if len(dst) != len(x).
// The assembly paths use a fused multiply-add (one rounding instead of
// two), so results can differ from the pure-Go path in the last bit.
func Axpy(dst []float32, alpha float32, x []float32) {
	if len(dst) != len(x) {
		panic("ops: Axpy: lengths differ")
	}
	active.axpy(dst, alpha, x)
}

// Scale sets x[i] *= s.
func Scale(x []float32, s float32) {
	active.scale(x, s)
}

// Add sets dst[i] = a[i] + b[i]. dst may alias a or b. It panics unless
// all three lengths are equal.
func Add(dst, a, b []float32) {
	if len(a) != len(dst) || len(b) != len(dst) {
		panic("ops: Add: lengths differ")
	}
	active.add(dst, a, b)
}

// Mul sets dst[i] = a[i] · b[i]. dst may alias a or b. It panics unless
// all three lengths are equal.
func Mul(dst, a, b []float32) {
	if len(a) != len(dst) || len(b) != len(dst) {
		panic("ops: Mul: lengths differ")
	}
	active.mul(dst, a, b)
}

// Implementation returns the name of the kernel set in use: "avx512",
// "avx2" or "generic" (the pure-Go code, always used with the purego build
// tag and on other architectures).
func Implementation() string {
	return active.name
}

// kernelSet is one implementation of the dispatched kernels. Arguments are
// already checked: slices passed together have equal lengths.
type kernelSet struct {
	name      string
	tier      int // the cpu tier it belongs to
	dot       func(a, b []float32) float32
	axpy      func(dst []float32, alpha float32, x []float32)
	scale     func(x []float32, s float32)
	add, mul  func(dst, a, b []float32)
	fwht8     func(x []float32)
	fwhtStage func(x []float32, h int)
	f16ToF32  func(dst []float32, src []byte)
	f32ToF16  func(dst []byte, src []float32)
	bf16ToF32 func(dst []float32, src []byte)
	max       func(x []float32) float32
	sumSq     func(x []float32) float64
	expSubSum func(x []float32, m float32) float64
	sigmoid   func(dst, x []float32)
	silu      func(dst, x []float32)
	swiglu    func(dst, gate, up []float32)
}

// genericKernels is the pure-Go implementation, always available.
var genericKernels = kernelSet{
	name:      "generic",
	tier:      cpu.Generic,
	dot:       dotGeneric,
	axpy:      axpyGeneric,
	scale:     scaleGeneric,
	add:       addGeneric,
	mul:       mulGeneric,
	fwht8:     fwht8Generic,
	fwhtStage: fwhtStageGeneric,
	f16ToF32:  f16ToF32Generic,
	f32ToF16:  f32ToF16Generic,
	bf16ToF32: bf16ToF32Generic,
	max:       maxGeneric,
	sumSq:     sumSquaresGeneric,
	expSubSum: expSubSumGeneric,
	sigmoid:   sigmoidGeneric,
	silu:      siluGeneric,
	swiglu:    swigluGeneric,
}

// active is the implementation in use: the best of kernelSets (which the
// architecture file orders best first, genericKernels last) at or below
// the tier the kernels package runs too (cpu.Tier: TRIT_CPU lowers both).
var active = setFor(cpu.Tier)

// setFor returns the best kernel set of tier t or lower.
func setFor(t int) *kernelSet {
	for _, k := range kernelSets {
		if k.tier <= t {
			return k
		}
	}
	return &genericKernels
}

// dotGeneric keeps eight partial sums so the loop is not bound by the
// latency of one dependent addition chain.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
}

func axpyGeneric(dst []float32, alpha float32, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += alpha * x[i]
	}
}

func scaleGeneric(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

func addGeneric(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func mulGeneric(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}
