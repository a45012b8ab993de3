package kernels

import (
	"encoding/binary"
	"math"
	"sync"

	"trit/half"
	"trit/quant"
)

// swarFormats gives the formats with a swarKernel theirs.
var swarFormats = map[*quant.Format]*swarKernel{
	quant.TQ1_0: swarTQ1_0, quant.TQ2_0: swarTQ2_0, quant.Q1_0: swarQ1_0, quant.Q2_0: swarQ2_0,
	quant.PQ2_0: swarQ2_0, quant.Q2_0g64: swarQ2_0g64, quant.PTQ1_0: swarPTQ1_0,
}

// The generic tier of every format: what the products run with the purego
// tag, on other architectures and with TRIT_CPU=generic, and the traits
// the SIMD tiers fall back to.
func init() {
	for f, dot := range map[*quant.Format]dotFn{quant.F32: dotF32Go, quant.F16: dotF16Go, quant.BF16: dotBF16Go} {
		define(f, tierGeneric, traits{float: true, dot: dot})
	}
	define(quant.Q8_0, tierGeneric, traits{act: actQ8_0, acts: natural(actQ8_0), dot: dotQ8_0Go})
	define(quant.Q4_0, tierGeneric, traits{act: actQ8_0, acts: natural(actQ8_0), dot: dotQ4_0Go})
	define(quant.Q4_K, tierGeneric, traits{act: actQ8_K, acts: natural(actQ8_K), dot: dotQ4_KGo})
	define(quant.Q6_K, tierGeneric, traits{act: actQ8_K, acts: natural(actQ8_K), dot: dotQ6_KGo})
	for f, sk := range swarFormats {
		define(f, tierGeneric, traits{act: sk.act, acts: sk.layout, dot: sk.dotAct, rows: sk.rowsAct})
	}
}

// The portable Go kernels. Each returns Σ_j W[j]·x[j] for one packed row w
// and activation row i of a. Integer formats accumulate an exact int32 per
// 32-element activation block and then, in ggml's association, add
// d_a·int to a per-weight-block float that is scaled by the weight scale.

// actRow returns the int8 values, scales and sums of activation row i in
// quantization k (built by MatMulActs before any kernel runs).
func actRow(a *Acts, k actKind, i int) ([]int8, []float32, []int32) {
	nb, t := a.cols/qk, &a.q8[k]
	return t.q[i*a.cols : (i+1)*a.cols], t.d[i*nb : (i+1)*nb], t.s[i*nb : (i+1)*nb]
}

func dotQ8_0Go(w []byte, a *Acts, i int) float32 {
	q, d, _ := actRow(a, actQ8_0, i)
	var sum float32
	for b, k := 0, 0; b+34 <= len(w); b, k = b+34, k+1 {
		blk := w[b : b+34]
		x := q[k*qk : k*qk+qk]
		var t int32
		for j, c := range blk[2:34] {
			t += int32(int8(c)) * int32(x[j])
		}
		sum += fp16(blk) * d[k] * float32(t)
	}
	return sum
}

func dotQ4_0Go(w []byte, a *Acts, i int) float32 {
	q, d, s := actRow(a, actQ8_0, i)
	var sum float32
	for b, k := 0, 0; b+18 <= len(w); b, k = b+18, k+1 {
		blk := w[b : b+18]
		x := q[k*qk : k*qk+qk]
		var t int32
		for j, c := range blk[2:18] {
			t += int32(c&15)*int32(x[j]) + int32(c>>4)*int32(x[j+16])
		}
		sum += fp16(blk) * d[k] * float32(t-8*s[k])
	}
	return sum
}

func dotQ4_KGo(w []byte, a *Acts, i int) float32 {
	q, d, s := actRow(a, actQ8_K, i)
	var sum float32
	for b, k0 := 0, 0; b+144 <= len(w); b, k0 = b+144, k0+8 {
		blk := w[b : b+144]
		dw, dmin := fp16(blk), fp16(blk[2:])
		for c := range 4 {
			qs := blk[16+32*c : 48+32*c]
			x0, x1 := q[(k0+2*c)*qk:(k0+2*c)*qk+qk], q[(k0+2*c+1)*qk:(k0+2*c+1)*qk+qk]
			var t0, t1 int32
			for l, v := range qs {
				t0 += int32(v&15) * int32(x0[l])
				t1 += int32(v>>4) * int32(x1[l])
			}
			s0, m0 := q4kScale(blk[4:16], 2*c)
			s1, m1 := q4kScale(blk[4:16], 2*c+1)
			sum += d[k0+2*c] * (dw*float32(s0)*float32(t0) - dmin*float32(m0)*float32(s[k0+2*c]))
			sum += d[k0+2*c+1] * (dw*float32(s1)*float32(t1) - dmin*float32(m1)*float32(s[k0+2*c+1]))
		}
	}
	return sum
}

func dotQ6_KGo(w []byte, a *Acts, i int) float32 {
	q, d, _ := actRow(a, actQ8_K, i)
	var sum float32
	for b, k0 := 0, 0; b+210 <= len(w); b, k0 = b+210, k0+8 {
		blk := (*[210]byte)(w[b : b+210])
		dw := fp16(blk[208:])
		for h := range 2 {
			// Byte l of ql and qh holds four elements of this 128-element
			// half, 32 apart: decoding them together reads each byte once.
			ql, qh := (*[64]byte)(blk[64*h:]), (*[32]byte)(blk[128+32*h:])
			x := (*[128]int8)(q[(k0+4*h)*qk:])
			var t [4][2]int32 // [32-block][16-element scale group]
			for l := range 32 {
				lo, hi, c := ql[l], ql[l+32], qh[l]
				g := l >> 4
				t[0][g] += (int32(lo&15|c&3<<4) - 32) * int32(x[l])
				t[1][g] += (int32(hi&15|c>>2&3<<4) - 32) * int32(x[32+l])
				t[2][g] += (int32(lo>>4|c>>4&3<<4) - 32) * int32(x[64+l])
				t[3][g] += (int32(hi>>4|c>>6<<4) - 32) * int32(x[96+l])
			}
			for tt := range 4 {
				is := 192 + 8*h + 2*tt
				isum := int32(int8(blk[is]))*t[tt][0] + int32(int8(blk[is+1]))*t[tt][1]
				sum += dw * d[k0+4*h+tt] * float32(isum)
			}
		}
	}
	return sum
}

// The float kernels use four partial sums (the order a SIMD loop would
// use too), which keeps float32 accumulation error well under 1e-6 relative
// for rows of a few thousand elements with benign values.

func floatRow(a *Acts, i int) []float32 { return a.x[i*a.cols : (i+1)*a.cols] }

func dotF32Go(w []byte, a *Acts, i int) float32 {
	x := floatRow(a, i)
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(x); j += 4 {
		v := w[4*j : 4*j+16]
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(v)) * x[j]
		s1 += math.Float32frombits(binary.LittleEndian.Uint32(v[4:])) * x[j+1]
		s2 += math.Float32frombits(binary.LittleEndian.Uint32(v[8:])) * x[j+2]
		s3 += math.Float32frombits(binary.LittleEndian.Uint32(v[12:])) * x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(w[4*j:])) * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// f16Table maps every fp16 bit pattern to its float32 value (256 KiB, built
// on first use), which is several times faster than converting per element.
var f16Table = sync.OnceValue(func() []float32 {
	t := make([]float32, 1<<16)
	for h := range t {
		t[h] = half.ToFloat32(uint16(h))
	}
	return t
})

func dotF16Go(w []byte, a *Acts, i int) float32 {
	x := floatRow(a, i)
	tab := f16Table()
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(x); j += 4 {
		v := w[2*j : 2*j+8]
		s0 += tab[binary.LittleEndian.Uint16(v)] * x[j]
		s1 += tab[binary.LittleEndian.Uint16(v[2:])] * x[j+1]
		s2 += tab[binary.LittleEndian.Uint16(v[4:])] * x[j+2]
		s3 += tab[binary.LittleEndian.Uint16(v[6:])] * x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += tab[binary.LittleEndian.Uint16(w[2*j:])] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotBF16Go(w []byte, a *Acts, i int) float32 {
	x := floatRow(a, i)
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(x); j += 4 {
		v := w[2*j : 2*j+8]
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(v))<<16) * x[j]
		s1 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(v[2:]))<<16) * x[j+1]
		s2 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(v[4:]))<<16) * x[j+2]
		s3 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(v[6:]))<<16) * x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*j:]))<<16) * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}
