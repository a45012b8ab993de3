package kernels

import (
	"fmt"
	"math"

	"trit/half"
)

// qk is the number of activations per int8 block.
const qk = 32

// Acts holds activations quantized once per row, reusable for every matrix
// with the same Cols (q/k/v share one, gate/up share one).
//
// Layout: each row of Cols values is split into Cols/32 blocks. Block k
// keeps 32 int8 values q, a float32 scale d and the int32 sum s = Σq, so
// x ≈ d·q. The quantizer is ggml's Q8_0 reference (d = amax/127 rounded to
// fp16, q = round-half-away(x/d)), so the integer products equal llama.cpp's.
// Unsigned weight codes c = t+1 ∈ {0,1,2} then give Σ t·q = Σ c·q − s.
//
// The SIMD tiers also use, built on demand and with rows padded by 64
// bytes: a copy of q, a copy with every block's 32 values reordered so that position 8i+p holds element 4p+i (the order
// in which a shift-per-qword unpacks Q2_0's 2-bit codes), and per block 8
// int32 lanes (−s, 0, …, 0) and 8 float32 lanes of d, so a block's vector of
// partial dot products starts from the correction and meets its scale
// without a horizontal sum.
//
// TQ1_0 and PTQ1_0 use their own slot order in the SIMD tiers, quantized
// from the float copy in 32-slot blocks (see tritLayout).
//
// Float weights (F32, F16, BF16) use a float copy of the activations.
//
// The zero Acts is ready for Quantize. The layouts are built lazily by the
// products, so an Acts must not be used by two calls at the same time.
type Acts struct {
	n, cols int
	x       []float32
	q       []int8
	d       []float32
	s       []int32

	simd   bool // qn, qt, sz, ds are current
	stride int  // bytes per row in qn, qt, sz and ds
	qn     []int8
	qt     []int8
	sz     []int32
	ds     []float32

	trit [2]tritActs // PTQ1_0 and TQ1_0 slot layouts, built on demand
	lut  []int16     // the generic tier's lookup tables (see lutKernel)
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
// buffers. Rows whose length is not a multiple of 32 keep only the float
// copy, which is all the float formats need.
func (p *Pool) Quantize(a *Acts, x []float32, n, cols int) {
	if n < 0 || cols <= 0 || len(x) < n*cols {
		panic(fmt.Sprintf("kernels: Quantize: %d values for %d×%d", len(x), n, cols))
	}
	a.n, a.cols, a.simd = n, cols, false
	a.trit[0].ok, a.trit[1].ok = false, false
	a.x = grow(a.x, n*cols)
	copy(a.x, x[:n*cols])
	if cols%qk != 0 {
		a.q, a.d, a.s = a.q[:0], a.d[:0], a.s[:0]
		return
	}
	nb := n * cols / qk
	a.q = grow(a.q, n*cols)
	a.d = grow(a.d, nb)
	a.s = grow(a.s, nb)
	p.forGrain(nb, 64, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			a.d[b], a.s[b] = quantizeBlock(a.q[b*qk:(b+1)*qk], a.x[b*qk:(b+1)*qk])
		}
	})
}

// quantizeBlock is ggml's quantize_row_q8_0_ref for one block, with the scale
// rounded through fp16 as block_q8_0 stores it.
func quantizeBlock(q []int8, x []float32) (float32, int32) {
	q, x = q[:qk], x[:qk]
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var s int32
	for i, v := range x {
		r := int8(math.Round(float64(v * id)))
		q[i] = r
		s += int32(r)
	}
	return half.ToFloat32(half.FromFloat32(d)), s
}

// simdPad is added to every row of the SIMD layouts: with rows a multiple
// of 4 KiB apart, the twelve streams of a four-row kernel would fall into
// the same L1 sets.
const simdPad = 64

// prepareSIMD builds the SIMD layouts once per Quantize. Row i of qn, qt,
// sz and ds starts at byte i·stride of its array.
func (a *Acts) prepareSIMD(p *Pool) {
	if a.simd || len(a.q) == 0 {
		return
	}
	a.stride = a.cols + simdPad
	a.qn = grow(a.qn, a.n*a.stride)
	a.qt = grow(a.qt, a.n*a.stride)
	a.sz = grow(a.sz, a.n*a.stride/4)
	a.ds = grow(a.ds, a.n*a.stride/4)
	nb := a.cols / qk
	p.forGrain(a.n*nb, 64, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			i, k := b/nb, b%nb
			off := i*a.stride + k*qk
			q := a.q[b*qk : (b+1)*qk]
			copy(a.qn[off:off+qk], q)
			qt := a.qt[off : off+qk]
			for i := range 4 {
				for p := range 8 {
					qt[8*i+p] = q[4*p+i]
				}
			}
			sz, ds := a.sz[off/4:off/4+8], a.ds[off/4:off/4+8]
			for l := range 8 {
				sz[l], ds[l] = 0, a.d[b]
			}
			sz[0] = -a.s[b]
		}
	})
	a.simd = true
}
