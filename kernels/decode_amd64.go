//go:build amd64 && !purego

package kernels

// The AVX-512 activation quantizer and plane builders (decode_amd64.s):
// a decode product quantizes its activation row and builds the plane
// layout on one thread before the parallel part, ≈ 20 µs for 4096 columns
// in Go against a few hundred µs for the product.

//go:noescape
func quantQ8_0AVX512(x *float32, nb int, q *int8, d *float32, s *int32)

//go:noescape
func quantQ8_KAVX512(x *float32, nb int, q *int8, d *float32, s *int32)

//go:noescape
func planeQ2AVX512(dst, src *int8, nv int)

//go:noescape
func planeQ1AVX512(dst, src *int8)

func init() {
	if hwTier < tierAVX512 {
		return
	}
	quantQ8_0SIMD = func(q []int8, d []float32, s []int32, x []float32) {
		if len(d) > 0 {
			_, _, _ = q[len(d)*qk-1], s[len(d)-1], x[len(d)*qk-1]
			quantQ8_0AVX512(&x[0], len(d), &q[0], &d[0], &s[0])
		}
	}
	quantQ8_KSIMD = func(q []int8, d []float32, s []int32, x []float32) {
		if n := len(d) / (qkK / qk); n > 0 {
			_, _, _ = q[n*qkK-1], s[len(d)-1], x[n*qkK-1]
			quantQ8_KAVX512(&x[0], n, &q[0], &d[0], &s[0])
		}
	}
	planeQ2SIMD = func(dst, src []int8) {
		_ = dst[len(src)-1]
		planeQ2AVX512(&dst[0], &src[0], len(src)/64)
	}
	planeQ1SIMD = func(dst, src []int8) {
		_, _ = dst[511], src[511]
		planeQ1AVX512(&dst[0], &src[0])
	}
}
