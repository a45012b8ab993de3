//go:build amd64 && !purego

package kernels

import "trit/quant"

// The SIMD tiers of every format, in one place (the generic tier is in
// generic.go). Formats missing at AVX-512 run their AVX2 code there.
func init() {
	for f, dot := range map[*quant.Format]dotFn{quant.F32: dotF32AVX2, quant.F16: dotF16AVX2, quant.BF16: dotBF16AVX2} {
		define(f, tierAVX2, traits{float: true, dot: dot})
	}
	nat0, natK := natural(actQ8_0), natural(actQ8_K)
	define(quant.Q8_0, tierAVX2, traits{act: actQ8_0, acts: nat0, dot: dotQ8_0AVX2})
	define(quant.Q8_0, tierAVX512, traits{act: actQ8_0, acts: nat0, dot: dotQ8_0AVX512})
	define(quant.Q4_0, tierAVX2, traits{act: actQ8_0, acts: nat0, dot: dotQ4_0AVX2})
	define(quant.Q4_0, tierAVX512, traits{act: actQ8_0, acts: nat0, dot: dotQ4_0AVX512})
	define(quant.Q4_K, tierAVX2, traits{act: actQ8_K, acts: natK, dot: dotQ4_KAVX2})
	define(quant.Q4_K, tierAVX512, traits{act: actQ8_K, acts: natK, dot: dotQ4_KAVX512})
	define(quant.Q6_K, tierAVX2, traits{act: actQ8_K, acts: natK, dot: dotQ6_KAVX2})

	simd0, simdK := simdLayout(actQ8_0), simdLayout(actQ8_K)
	for _, f := range []*quant.Format{quant.Q2_0, quant.PQ2_0} {
		define(f, tierAVX2, traits{act: actQ8_0, acts: simd0, dot: dotQ2_0AVX2})
		define(f, tierAVX512, traits{act: actQ8_0, acts: planesLayout(planeQ2, false),
			dot: dotQ2_0Planes, rows: rowsQ2_0Planes, rows4: rows4Q2_0Planes, gemm: simdGEMM(gemmQ2, unpackQ2AVX512)})
	}
	define(quant.Q2_0g64, tierAVX2, traits{act: actQ8_0, acts: simd0, dot: dotQ2_0g64AVX2})
	define(quant.Q2_0g64, tierAVX512, traits{act: actQ8_0, acts: planesLayout(planeQ2, true),
		dot: dotQ2_0g64Planes, rows: rowsQ2_0g64Planes, gemm: simdGEMM(gemmQ2g64, unpackQ2g64AVX512)})
	define(quant.TQ2_0, tierAVX2, traits{act: actQ8_K, acts: simdK, dot: dotTQ2_0AVX2})
	define(quant.TQ2_0, tierAVX512, traits{act: actQ8_K, acts: planesLayout(planeTQ2, false),
		dot: dotTQ2_0Planes, rows: rowsTQ2_0Planes, rows4: rows4TQ2_0Planes, gemm: simdGEMM(gemmTQ2, unpackTQ2AVX512)})
	define(quant.Q1_0, tierAVX2, traits{act: actQ8_0, acts: simd0, dot: dotQ1_0AVX2})
	define(quant.Q1_0, tierAVX512, traits{act: actQ8_0, acts: planesLayout(planeQ1, true),
		dot: dotQ1_0Planes, rows: rowsQ1_0Planes, gemm: simdGEMM(gemmQ1, unpackQ1AVX512)})

	ptq1, tq1 := tritLayoutOf(layoutPTQ1_0), tritLayoutOf(layoutTQ1_0)
	define(quant.PTQ1_0, tierAVX2, traits{act: actQ8_0, acts: ptq1, dot: dotPTQ1_0AVX2})
	define(quant.PTQ1_0, tierAVX512, traits{act: actQ8_0, acts: ptq1,
		dot: dotPTQ1_0AVX512, rows: rowsPTQ1_0AVX512, gemm: simdGEMM(gemmPTQ1, unpackPTQ1AVX512)})
	define(quant.TQ1_0, tierAVX2, traits{act: actQ8_K, acts: tq1, dot: dotTQ1_0AVX2})
	define(quant.TQ1_0, tierAVX512, traits{act: actQ8_K, acts: tq1,
		dot: dotTQ1_0AVX512, rows: rowsTQ1_0AVX512, gemm: simdGEMM(gemmTQ1, unpackTQ1AVX512)})
}

// The assembly kernels take one packed row of nb blocks and the SIMD
// layouts of one activation row (see Acts): q (reordered for Q2_0, natural
// otherwise), sz and ds. kb is the number of 32-element activation blocks
// per weight block (4 for g128, 2 for g64).

//go:noescape
func q2AVX2(w *byte, nb, kb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func q2AVX512(w *byte, nb, kb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func tq2AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func q1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func q1AVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func ptq1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32

//go:noescape
func tq1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32

// tritRow returns pointers to activation row i in trit layout k, from
// element k0 (a multiple of the block size) on.
func tritRow(a *Acts, i, k0 int, l *tritLayout) (*int8, *int32, *float32) {
	t := &a.trit[l.id]
	off := i*t.stride + k0/l.be*len(l.slots)
	return &t.q[off], &t.sz[off/4], &t.ds[off/4]
}

func dotPTQ1_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := tritRow(a, i, 0, layoutPTQ1_0)
	return ptq1AVX2(&w[0], len(w)/28, q, sz, ds)
}

func dotTQ1_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := tritRow(a, i, 0, layoutTQ1_0)
	return tq1AVX2(&w[0], len(w)/54, q, sz, ds)
}

// simdRow returns pointers to activation row i's SIMD layouts of
// quantization k, from
// element k0 on.
func simdRow(a *Acts, k actKind, i, k0 int, reordered bool) (*int8, *int32, *float32) {
	t := &a.q8[k]
	off := i*t.stride + k0
	q := t.qn
	if reordered {
		q = t.qt
	}
	return &q[off], &t.sz[off/4], &t.ds[off/4]
}

func dotQ2_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := simdRow(a, actQ8_0, i, 0, true)
	return q2AVX2(&w[0], len(w)/34, 4, q, sz, ds)
}

// The single-row plane kernels (planes_amd64.s) read the plane layout
// (preparePlanes) of one activation row and compute the products of nr
// weight rows of rb bytes each, from w on, into dst[0:nr].

//go:noescape
func q2pAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, dst *float32)

//go:noescape
func tq2pAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, dst *float32)

// q1pAVX512 takes the first nc 512-element chunks (four blocks each) of
// every row.
//
//go:noescape
func q1pAVX512(w *byte, rb, nr, nc int, q *int8, sz *int32, ds *float32, dst *float32)

// planeRow returns pointers to activation row i in plane layout l.
func planeRow(a *Acts, l planeLayout, i int) (*int8, *int32, *float32) {
	t, lanes := &a.planes[l], planeInfo[l].lanes
	off := i * t.stride
	return &t.q[off], &t.sz[off/lanes], &t.ds[off/lanes]
}

// The Q2_0_g64 plane kernels take nc 256-element chunks (four blocks).

//go:noescape
func q2gpAVX512(w *byte, rb, nr, nc int, q *int8, sz *int32, ds *float32, dst *float32)

// chunkRows computes len(dst) rows of rb bytes each (18-byte blocks:
// Q2_0_g64, Q1_0) from w on with activation row i: kern, the plane kernel
// of layout l, over the whole chunks of four blocks, then tail, an older
// single-row kernel, adds each row's remaining blocks from the SIMD layout
// (reordered for Q2_0_g64's codes).
func chunkRows(dst []float32, w []byte, rb int, a *Acts, i int, l planeLayout,
	kern func(w *byte, rb, nr, nc int, q *int8, sz *int32, ds *float32, dst *float32),
	tail func(w *byte, nb int, q *int8, sz *int32, ds *float32) float32, reordered bool) {
	nb := rb / 18
	nc := nb / 4
	if nc > 0 {
		q, sz, ds := planeRow(a, l, i)
		kern(&w[0], rb, len(dst), nc, q, sz, ds, &dst[0])
	} else {
		clear(dst)
	}
	if nb > 4*nc {
		q, sz, ds := simdRow(a, actQ8_0, i, planeInfo[l].chunk*nc, reordered)
		for r := range dst {
			dst[r] += tail(&w[r*rb+72*nc], nb-4*nc, q, sz, ds)
		}
	}
}

// q2gTail is the single-row Q2_0_g64 kernel (two 32-blocks per block).
func q2gTail(w *byte, nb int, q *int8, sz *int32, ds *float32) float32 {
	return q2AVX512(w, nb, 2, q, sz, ds)
}

func q2gRows(dst []float32, w []byte, rb int, a *Acts, i int) {
	chunkRows(dst, w, rb, a, i, planeQ2, q2gpAVX512, q2gTail, true)
}

func dotQ2_0g64Planes(w []byte, a *Acts, i int) float32 {
	var out [1]float32
	q2gRows(out[:], w, len(w), a, i)
	return out[0]
}

func rowsQ2_0g64Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	q2gRows(dst[lo:hi], w.Data[lo*rb:hi*rb], rb, a, i)
}

func dotQ2_0Planes(w []byte, a *Acts, i int) float32 {
	var out float32
	q, sz, ds := planeRow(a, planeQ2, i)
	q2pAVX512(&w[0], len(w), 1, len(w)/34, q, sz, ds, &out)
	return out
}

func rowsQ2_0Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	q, sz, ds := planeRow(a, planeQ2, i)
	q2pAVX512(&w.Data[lo*rb], rb, hi-lo, rb/34, q, sz, ds, &dst[lo])
}

// The four-row plane kernels (rows4_amd64.s) take activation rows i..i+3
// of the plane layout at once, astride bytes apart, and store the products
// of nr weight rows, row j's dstride bytes after row 0's.

//go:noescape
func tq2mAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, astride int, dst *float32, dstride int)

//go:noescape
func q2mAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, astride int, dst *float32, dstride int)

// planeRows4 runs the four-row plane kernel kern of layout l.
func planeRows4(kern func(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, astride int, dst *float32, dstride int),
	l planeLayout, bb int, dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	if hi <= lo {
		return
	}
	rb := w.rowBytes()
	q, sz, ds := planeRow(a, l, i)
	_ = dst[(i+3)*w.Rows+hi-1]
	kern(&w.Data[lo*rb], rb, hi-lo, rb/bb, q, sz, ds, a.planes[l].stride, &dst[i*w.Rows+lo], 4*w.Rows)
}

func rows4TQ2_0Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	planeRows4(tq2mAVX512, planeTQ2, 66, dst, w, a, i, lo, hi)
}

// rows4Q2_0Planes: the four-row kernel takes whole chunks of two blocks;
// a row of an odd number of blocks takes the one-row kernel per row.
func rows4Q2_0Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	if w.Cols/128%2 != 0 {
		rows4Of(rowsQ2_0Planes)(dst, w, a, i, lo, hi)
		return
	}
	planeRows4(q2mAVX512, planeQ2, 34, dst, w, a, i, lo, hi)
}

func dotTQ2_0Planes(w []byte, a *Acts, i int) float32 {
	var out float32
	q, sz, ds := planeRow(a, planeTQ2, i)
	tq2pAVX512(&w[0], len(w), 1, len(w)/66, q, sz, ds, &out)
	return out
}

func rowsTQ2_0Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	q, sz, ds := planeRow(a, planeTQ2, i)
	tq2pAVX512(&w.Data[lo*rb], rb, hi-lo, rb/66, q, sz, ds, &dst[lo])
}

func q1Rows(dst []float32, w []byte, rb int, a *Acts, i int) {
	chunkRows(dst, w, rb, a, i, planeQ1, q1pAVX512, q1AVX512, false)
}

func dotQ1_0Planes(w []byte, a *Acts, i int) float32 {
	var out [1]float32
	q1Rows(out[:], w, len(w), a, i)
	return out[0]
}

func rowsQ1_0Planes(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	q1Rows(dst[lo:hi], w.Data[lo*rb:hi*rb], rb, a, i)
}

func dotQ2_0g64AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := simdRow(a, actQ8_0, i, 0, true)
	return q2AVX2(&w[0], len(w)/18, 2, q, sz, ds)
}

func dotTQ2_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := simdRow(a, actQ8_K, i, 0, false)
	return tq2AVX2(&w[0], len(w)/66, q, sz, ds)
}

func dotQ1_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := simdRow(a, actQ8_0, i, 0, false)
	return q1AVX2(&w[0], len(w)/18, q, sz, ds)
}
