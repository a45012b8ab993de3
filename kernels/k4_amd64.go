//go:build amd64 && !purego

package kernels

import (
	"encoding/binary"
	"math"

	"trit/half"
)

// The Q4_0 and Q4_K kernels (k4_amd64.s) read the natural int8 layout of
// one activation row like the Q8_0 and Q6_K kernels. Their AVX-512 tier
// unpacks nibbles with GF2P8AFFINEQB (one instruction for a low or high
// half of any byte) and moves Q4_0's codes into place with VPERMB (the
// AVX-512 tier has both, see detectTier). The F16 (F16C) and BF16 kernels are
// bandwidth-bound FMA loops, for which 256-bit vectors suffice; F32's
// keeps the generic kernel's order (see f32AVX2).

//go:noescape
func q40AVX2(w *byte, nb int, q *int8, d *float32) float32

//go:noescape
func q40AVX512(w *byte, nb int, q *int8, d *float32) float32

//go:noescape
func f32AVX2(w *byte, x *float32, n int, s *[4]float32)

//go:noescape
func f16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func bf16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func q4kAVX2(w *byte, nb int, q *int8, d *float32, s *int32) float32

//go:noescape
func q4kAVX512(w *byte, nb int, q *int8, d *float32, s *int32) float32

func dotQ4_0AVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_0, i)
	return q40AVX2(&w[0], len(w)/18, q, d)
}

func dotQ4_0AVX512(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_0, i)
	return q40AVX512(&w[0], len(w)/18, q, d)
}

func dotQ4_KAVX2(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_K, i)
	return q4kAVX2(&w[0], len(w)/144, q, d, &a.q8[actQ8_K].s[i*a.cols/qk])
}

func dotQ4_KAVX512(w []byte, a *Acts, i int) float32 {
	q, d := natRow(a, actQ8_K, i)
	return q4kAVX512(&w[0], len(w)/144, q, d, &a.q8[actQ8_K].s[i*a.cols/qk])
}

// floatDot runs the F16 or BF16 kernel k over the whole multiples of 8 of row i and adds
// the last up to 7 products in Go; size is the bytes per weight.
func floatDot(k func(*byte, *float32, int) float32, size int, w []byte, a *Acts, i int, tail func([]byte, []float32) float32) float32 {
	x := floatRow(a, i)
	m := len(x) &^ 7
	var s float32
	if m > 0 {
		s = k(&w[0], &x[0], m)
	}
	if m < len(x) {
		s += tail(w[m*size:], x[m:])
	}
	return s
}

func dotF32AVX2(w []byte, a *Acts, i int) float32 {
	x := floatRow(a, i)
	m := len(x) &^ 3
	var s [4]float32
	if m > 0 {
		f32AVX2(&w[0], &x[0], m, &s)
	}
	for j := m; j < len(x); j++ {
		s[0] += math.Float32frombits(binary.LittleEndian.Uint32(w[4*j:])) * x[j]
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func dotF16AVX2(w []byte, a *Acts, i int) float32 {
	return floatDot(f16AVX2, 2, w, a, i, func(w []byte, x []float32) float32 {
		var s float32
		for j, v := range x {
			s += half.ToFloat32(binary.LittleEndian.Uint16(w[2*j:])) * v
		}
		return s
	})
}

func dotBF16AVX2(w []byte, a *Acts, i int) float32 {
	return floatDot(bf16AVX2, 2, w, a, i, func(w []byte, x []float32) float32 {
		var s float32
		for j, v := range x {
			s += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*j:]))<<16) * v
		}
		return s
	})
}
