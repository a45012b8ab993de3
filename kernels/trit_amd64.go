//go:build amd64 && !purego

package kernels

// The AVX-512 trit kernels (trit_amd64.s) take nr packed rows of nb blocks
// (rb bytes) each from w on and store their products into dst[0:nr].
// tq1pAVX512 reads TQ1_0's slot layout, ptq1pAVX512 PTQ1_0's pair layout.
// The single-row products are the same kernels with nr = 1, so a row's
// product is the same whichever way it is computed.

//go:noescape
func tq1pAVX512(w *byte, rb, nr, nb int, q *int8, c *int32, ds *float32, dst *float32)

//go:noescape
func ptq1pAVX512(w *byte, rb, nr, nb int, q *int8, c *int32, ds *float32, dst *float32)

func dotTQ1_0AVX512(w []byte, a *Acts, i int) float32 {
	var out float32
	tq1Rows(&out, w, len(w), 1, a, i)
	return out
}

func rowsTQ1_0AVX512(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	tq1Rows(&dst[lo], w.Data[lo*rb:hi*rb], rb, hi-lo, a, i)
}

// tq1Rows computes nr TQ1_0 rows of rb bytes each from w on with
// activation row i into dst[0:nr].
func tq1Rows(dst *float32, w []byte, rb, nr int, a *Acts, i int) {
	q, _, _ := tritRow(a, i, 0, layoutTQ1_0)
	t, nb := &a.trit[layoutTQ1_0.id], rb/54
	tq1pAVX512(&w[0], rb, nr, nb, q, &t.pc[i*nb], &t.pds[i*nb], dst)
}

func dotPTQ1_0AVX512(w []byte, a *Acts, i int) float32 {
	var out float32
	ptq1Rows(&out, w, len(w), 1, a, i)
	return out
}

func rowsPTQ1_0AVX512(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	rb := w.rowBytes()
	ptq1Rows(&dst[lo], w.Data[lo*rb:hi*rb], rb, hi-lo, a, i)
}

// ptq1Rows computes nr PTQ1_0 rows of rb bytes each from w on with
// activation row i into dst[0:nr].
func ptq1Rows(dst *float32, w []byte, rb, nr int, a *Acts, i int) {
	t := &a.trit[layoutPTQ1_0.id]
	pair := i * t.pstride / pairSlots
	ptq1pAVX512(&w[0], rb, nr, rb/28, &t.pq[i*t.pstride], &t.pc[pair*pairLanes], &t.pds[pair*pairScales], dst)
}
