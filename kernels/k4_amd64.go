//go:build amd64 && !purego

package kernels

import "trit/quant"

// The Q4_0 and Q4_K kernels (k4_amd64.s) read the natural int8 layout of
// one activation row like the Q8_0 and Q6_K kernels. Neither format's
// scales fit VPDPBUSD better than VPMADDUBSW+VPMADDWD, so the AVX2 kernels
// serve the AVX-512 tier too (pick falls back to them).

//go:noescape
func q40AVX2(w *byte, nb int, q *int8, d *float32) float32

//go:noescape
func q4kAVX2(w *byte, nb int, q *int8, d *float32, s *int32) float32

func init() {
	kernelTable[quant.Q4_0].dot[tierAVX2] = dotQ4_0AVX2
	kernelTable[quant.Q4_K].dot[tierAVX2] = dotQ4_KAVX2
}

func dotQ4_0AVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_0, i)
	return q40AVX2(&w[0], len(w)/18, q, d)
}

func dotQ4_KAVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_K, i)
	return q4kAVX2(&w[0], len(w)/144, q, d, &a.q8[actQ8_K].s[i*a.cols/qk])
}
