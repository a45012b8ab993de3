//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"trit/quant"
)

// detectTier picks the best tier the CPU runs. Both SIMD tiers convert the
// fp16 weight scales with F16C and accumulate with FMA. The AVX-512 kernels
// also move bytes with VBMI's permutes and unpack codes with GFNI's
// GF2P8AFFINEQB: every CPU with VNNI has both except Cascade Lake, which
// gets the AVX2 tier.
func detectTier() int {
	x := cpu.X86
	base := x.HasAVX2 && x.HasFMA && x.HasF16C
	switch {
	case base && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI && x.HasAVX512VBMI && x.HasAVX512GFNI:
		return tierAVX512
	case base:
		return tierAVX2
	}
	return tierGeneric
}

func init() {
	set := func(f *quant.Format, avx2, avx512 dotFn) {
		kernelTable[f].dot[tierAVX2] = avx2
		kernelTable[f].dot[tierAVX512] = avx512
	}
	set(quant.Q2_0, dotQ2_0AVX2, dotQ2_0Planes)
	set(quant.PQ2_0, dotQ2_0AVX2, dotQ2_0Planes)
	set(quant.Q2_0g64, dotQ2_0g64AVX2, dotQ2_0g64Planes)
	set(quant.TQ2_0, dotTQ2_0AVX2, dotTQ2_0Planes)
	set(quant.Q1_0, dotQ1_0AVX2, dotQ1_0Planes)
	rowsKernels = map[*quant.Format]rowsFn{
		quant.Q2_0: rowsQ2_0Planes, quant.PQ2_0: rowsQ2_0Planes, quant.Q2_0g64: rowsQ2_0g64Planes,
		quant.TQ2_0: rowsTQ2_0Planes, quant.Q1_0: rowsQ1_0Planes,
		quant.TQ1_0: rowsTQ1_0AVX512, quant.PTQ1_0: rowsPTQ1_0AVX512,
	}
	for f, l := range map[*quant.Format]planeLayout{
		quant.Q2_0: planeQ2, quant.PQ2_0: planeQ2, quant.Q2_0g64: planeQ2, quant.TQ2_0: planeTQ2, quant.Q1_0: planeQ1,
	} {
		kernelTable[f].planes[tierAVX512] = l
	}
	set(quant.PTQ1_0, dotPTQ1_0AVX2, dotPTQ1_0AVX512)
	set(quant.TQ1_0, dotTQ1_0AVX2, dotTQ1_0AVX512)
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
func tritRow(a *Acts, i, k0, k int) (*int8, *int32, *float32) {
	t, l := &a.trit[k], tritLayouts[k]
	off := i*t.stride + k0/l.be*len(l.slots)
	return &t.q[off], &t.sz[off/4], &t.ds[off/4]
}

func dotPTQ1_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := tritRow(a, i, 0, 0)
	return ptq1AVX2(&w[0], len(w)/28, q, sz, ds)
}

func dotTQ1_0AVX2(w []byte, a *Acts, i int) float32 {
	q, sz, ds := tritRow(a, i, 0, 1)
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

func rowsQ2_0g64Planes(dst []float32, w *Matrix, a *Acts, lo, hi int) {
	rb := w.rowBytes()
	q2gRows(dst[lo:hi], w.Data[lo*rb:hi*rb], rb, a, 0)
}

func dotQ2_0Planes(w []byte, a *Acts, i int) float32 {
	var out float32
	q, sz, ds := planeRow(a, planeQ2, i)
	q2pAVX512(&w[0], len(w), 1, len(w)/34, q, sz, ds, &out)
	return out
}

func rowsQ2_0Planes(dst []float32, w *Matrix, a *Acts, lo, hi int) {
	rb := w.rowBytes()
	q, sz, ds := planeRow(a, planeQ2, 0)
	q2pAVX512(&w.Data[lo*rb], rb, hi-lo, rb/34, q, sz, ds, &dst[lo])
}

func dotTQ2_0Planes(w []byte, a *Acts, i int) float32 {
	var out float32
	q, sz, ds := planeRow(a, planeTQ2, i)
	tq2pAVX512(&w[0], len(w), 1, len(w)/66, q, sz, ds, &out)
	return out
}

func rowsTQ2_0Planes(dst []float32, w *Matrix, a *Acts, lo, hi int) {
	rb := w.rowBytes()
	q, sz, ds := planeRow(a, planeTQ2, 0)
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

func rowsQ1_0Planes(dst []float32, w *Matrix, a *Acts, lo, hi int) {
	rb := w.rowBytes()
	q1Rows(dst[lo:hi], w.Data[lo*rb:hi*rb], rb, a, 0)
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

func dotQ1_0AVX512(w []byte, a *Acts, i int) float32 {
	q, sz, ds := simdRow(a, actQ8_0, i, 0, false)
	return q1AVX512(&w[0], len(w)/18, q, sz, ds)
}
