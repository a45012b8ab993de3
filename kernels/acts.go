package kernels

import (
	"fmt"
	"math"

	"trit/half"
)

// qk is the number of activations per int8 block.
const qk = 32

// qkK is the number of activations per Q8_K block.
const qkK = 256

// actKind names one int8 quantization of the activations.
type actKind int

const (
	// actQ8_0 is ggml's Q8_0 reference quantizer: 32-element blocks,
	// d = amax/127 rounded to fp16, q = round-half-away(x/d).
	actQ8_0 actKind = iota
	// actQ8_K is ggml's Q8_K reference quantizer, which llama.cpp pairs
	// with TQ1_0, TQ2_0, Q4_K and Q6_K: 256-element blocks, a float32
	// scale d = −max/127 (max the signed value of largest |x|), and
	// q = min(127, round-half-even(x/d)).
	actQ8_K
	numActKinds
)

// Acts holds activations quantized once per row, reusable for every matrix
// with the same Cols (q/k/v share one, gate/up share one).
//
// Each int8 quantization (see actKind) is built on demand, the first time
// a matrix needs it, since one Acts may feed matrices of different formats.
//
// Float weights (F32, F16, BF16) use a float copy of the activations.
//
// The zero Acts is ready for Quantize. The layouts are built lazily by the
// products, so an Acts must not be used by two calls at the same time.
type Acts struct {
	n, cols int
	x       []float32

	q8     [numActKinds]int8Acts
	trit   [2]tritActs                // PTQ1_0 and TQ1_0 slot layouts, built on demand
	planes [numPlaneLayouts]planeActs // the plane layouts, built on demand
	swar   []uint64                   // the generic tier's activation words (see swarKernel)
	swarOf *swarKernel                // the kernel whose words swar holds; nil: none
}

// int8Acts is one int8 quantization of every row. Each row of cols values
// is split into cols/32 blocks; block k keeps 32 int8 values q, a float32
// scale d and the int32 sum s = Σq, so x ≈ d·q. Q8_K's one scale per 256
// values is stored replicated in its eight 32-blocks, so every kernel sees
// the same per-32 layout. Unsigned weight codes c = t+1 ∈ {0,1,2} then give
// Σ t·q = Σ c·q − s.
//
// The SIMD tiers also use, built on demand and with rows padded by simdPad
// bytes: a copy of q, a copy with every block's 32 values reordered so that
// position 8i+p holds element 4p+i (the order in which a shift-per-qword
// unpacks Q2_0's 2-bit codes), and per block 8 int32 lanes (−s, 0, …, 0)
// and 8 float32 lanes of d, so a block's vector of partial dot products
// starts from the correction and meets its scale without a horizontal sum.
type int8Acts struct {
	ok bool // q, d and s are current
	q  []int8
	d  []float32
	s  []int32

	simd   bool // qn, qt, sz, ds are current
	stride int  // bytes per row in qn, qt, sz and ds
	qn     []int8
	qt     []int8
	sz     []int32
	ds     []float32
}

// N returns the number of activation rows.
func (a *Acts) N() int { return a.n }

// Cols returns the row length.
func (a *Acts) Cols() int { return a.cols }

// grow returns s resized to n, reusing its storage when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// Quantize stores the n rows of cols values in x into a, reusing a's
// buffers. The int8 quantizations the integer kernels need are built from
// this copy on first use; they need cols to be a multiple of the
// format's block size, which every quantized Matrix has.
func (p *Pool) Quantize(a *Acts, x []float32, n, cols int) {
	if n < 0 || cols <= 0 || len(x) < n*cols {
		panic(fmt.Sprintf("kernels: Quantize: %d values for %d×%d", len(x), n, cols))
	}
	a.n, a.cols = n, cols
	for k := range a.q8 {
		a.q8[k].ok, a.q8[k].simd = false, false
	}
	for k := range a.planes {
		a.planes[k].ok = false
	}
	a.trit[0].ok, a.trit[1].ok = false, false
	a.swarOf = nil
	a.x = grow(a.x, n*cols)
	copy(a.x, x[:n*cols])
}

// prepare builds quantization k of a once per Quantize and returns it.
// The caller guarantees that cols is a multiple of the kind's block size.
func (a *Acts) prepare(p *Pool, k actKind) *int8Acts {
	t := &a.q8[k]
	if t.ok {
		return t
	}
	nb := a.n * a.cols / qk
	t.q = grow(t.q, a.n*a.cols)
	t.d = grow(t.d, nb)
	t.s = grow(t.s, nb)
	// The SIMD quantizers take ≈ 1.5 µs per 4096 values, less than handing
	// work to another thread costs: only batches of rows are split.
	switch k {
	case actQ8_0:
		p.forGrain(nb, 1024, func(lo, hi int) {
			quantizeQ8_0(t.q[lo*qk:hi*qk], t.d[lo:hi], t.s[lo:hi], a.x[lo*qk:hi*qk])
		})
	case actQ8_K:
		const per = qkK / qk
		p.forGrain(nb/per, 128, func(lo, hi int) {
			quantizeQ8_K(t.q[lo*qkK:hi*qkK], t.d[lo*per:hi*per], t.s[lo*per:hi*per], a.x[lo*qkK:hi*qkK])
		})
	}
	t.ok = true
	return t
}

// quantizeBlock is ggml's quantize_row_q8_0_ref for one block, with the scale
// rounded through fp16 as block_q8_0 stores it.
func quantizeBlock(q []int8, x []float32) (float32, int32) {
	q, x = q[:qk], x[:qk]
	var amax float32
	for _, v := range x {
		// ggml's MAX(amax, fabsf(v)); Go's max is several times slower
		// here (it orders NaNs and signed zeros).
		if a := float32(math.Abs(float64(v))); !(amax > a) {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var s int32
	for i, v := range x {
		r := int8(roundHalfAway(v * id))
		q[i] = r
		s += int32(r)
	}
	return half.ToFloat32(half.FromFloat32(d)), s
}

// roundHalfAway is math.Round (C's roundf: halves away from zero) for a
// float32 value. In float64, f ± 0.5 is exact for every float32 f below
// 2²⁹ in magnitude, so truncating it rounds correctly, without the branch
// and the bit twiddling of math.Round that made quantizing 2× slower.
func roundHalfAway(f float32) float64 {
	x := float64(f)
	return math.Trunc(x + math.Copysign(0.5, x))
}

// quantizeBlockK is ggml's quantize_row_q8_K_ref for one 256-value block:
// it returns d and fills q. nearest_int there adds 1.5·2²³ in float32,
// which rounds half to even, as math.RoundToEven does for the float32
// product iscale·x. Non-finite inputs give unspecified values, not a panic.
func quantizeBlockK(q []int8, x []float32) float32 {
	q, x = q[:qkK], x[:qkK]
	var amax, vmax float32
	for _, v := range x {
		if av := float32(math.Abs(float64(v))); av > amax {
			amax, vmax = av, v
		}
	}
	if amax == 0 {
		clear(q)
		return 0
	}
	iscale := -127 / vmax
	for i, v := range x {
		// ggml's MIN(127, v); the lower clamp only keeps non-finite
		// input in range. Comparisons, not Go's float min and max,
		// which are several times slower.
		r := math.RoundToEven(float64(iscale * v))
		if r > 127 {
			r = 127
		} else if r < -128 {
			r = -128
		}
		q[i] = int8(r)
	}
	return 1 / iscale
}

// simdPad is added to every row of the SIMD layouts: with rows a multiple
// of 4 KiB apart, a kernel that reads several rows at once would have all
// its streams fall into the same L1 sets.
const simdPad = 64

// prepareSIMD builds the SIMD layouts of quantization k once per Quantize.
// Row i of qn, qt, sz and ds starts at byte i·stride of its array.
func (a *Acts) prepareSIMD(p *Pool, k actKind) *int8Acts {
	t := a.prepare(p, k)
	if t.simd {
		return t
	}
	t.stride = a.cols + simdPad
	t.qn = grow(t.qn, a.n*t.stride)
	t.qt = grow(t.qt, a.n*t.stride)
	t.sz = grow(t.sz, a.n*t.stride/4)
	t.ds = grow(t.ds, a.n*t.stride/4)
	nb := a.cols / qk
	p.forGrain(a.n*nb, 64, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			i, k := b/nb, b%nb
			off := i*t.stride + k*qk
			q := t.q[b*qk : (b+1)*qk]
			copy(t.qn[off:off+qk], q)
			qt := t.qt[off : off+qk]
			for i := range 4 {
				for p := range 8 {
					qt[8*i+p] = q[4*p+i]
				}
			}
			sz, ds := t.sz[off/4:off/4+8], t.ds[off/4:off/4+8]
			for l := range 8 {
				sz[l], ds[l] = 0, t.d[b]
			}
			sz[0] = -t.s[b]
		}
	})
	t.simd = true
	return t
}
