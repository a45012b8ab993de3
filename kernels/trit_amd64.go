//go:build amd64 && !purego

package kernels

// The AVX-512 trit kernels (trit_amd64.s) take one packed row of nb blocks.
// tq1AVX512 reads TQ1_0's slot layout, ptq1AVX512 PTQ1_0's pair layout
// with perm, ptq1Perm.

//go:noescape
func tq1AVX512(w *byte, nb int, q *int8, c *int32, ds *float32) float32

//go:noescape
func ptq1AVX512(w *byte, nb int, q *int8, c *int32, ds *float32, perm *[3][pairLanes]int32) float32

func dotTQ1_0AVX512(w []byte, a *Acts, i int) float32 {
	q, _, _ := tritRow(a, i, 0, 1)
	t, nb := &a.trit[1], len(w)/54
	return tq1AVX512(&w[0], nb, q, &t.pc[i*nb], &t.pds[i*nb])
}

func dotPTQ1_0AVX512(w []byte, a *Acts, i int) float32 {
	t := &a.trit[0]
	pair := i * t.pstride / pairSlots
	return ptq1AVX512(&w[0], len(w)/28, &t.pq[i*t.pstride], &t.pc[pair*pairLanes], &t.pds[pair*pairScales], &ptq1Perm)
}
