//go:build amd64 && !purego

package kernels

// The Q8_0 and Q6_K kernels (kq_amd64.s) read the natural int8 layout of
// one activation row (q) and its per-32 scales (d). Q6_K's per-16 int8
// scales fit VPMADDWD, not VPDPBUSD, so its AVX2 kernel serves both tiers
// (pick falls back to it): the same steps on 64-byte registers, two
// sub-block groups at a time, measured 13 % slower on this Zen 4 (16.9
// against 19.5 GB/s, one thread, 2048×151936).

//go:noescape
func q8AVX2(w *byte, nb int, q *int8, d *float32) float32

//go:noescape
func q8AVX512(w *byte, nb int, q *int8, d *float32) float32

//go:noescape
func q6kAVX2(w *byte, nb int, q *int8, d *float32) float32

// natRow returns pointers to activation row i of quantization k in its
// natural layout: the int8 values and the per-32 scales.
func natRow(a *Acts, k actKind, i int) (*int8, *float32) {
	t := &a.q8[k]
	return &t.q[i*a.cols], &t.d[i*a.cols/qk]
}

func dotQ8_0AVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_0, i)
	return q8AVX2(&w[0], len(w)/34, q, d)
}

func dotQ8_0AVX512(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_0, i)
	return q8AVX512(&w[0], len(w)/34, q, d)
}

func dotQ6_KAVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_K, i)
	return q6kAVX2(&w[0], len(w)/210, q, d)
}
