package kvcache

import (
	"encoding/binary"
	"math"

	"trit/half"
	"trit/ops"
	"trit/quant"
)

// Store writes the keys and values of position pos of layer l: k and v
// hold KVHeads×HeadDim floats, head by head. With Rotate set, a quantized
// K or V is rotated first (k and v are then overwritten). Reserve must
// have made room for pos.
func (c *Cache) Store(l, pos int, k, v []float32) {
	cfg := c.cfg
	hd := cfg.HeadDim
	if cfg.Rotate && Quantized(cfg.K) {
		Rotate(k, hd)
	}
	if cfg.Rotate && Quantized(cfg.V) {
		Rotate(v, hd)
	}
	for h := range cfg.KVHeads {
		kr, vr := c.rows(l, h, pos)
		encode(cfg.K, kr, k[h*hd:(h+1)*hd])
		encode(cfg.V, vr, v[h*hd:(h+1)*hd])
	}
}

// RotationBlock returns the size of the Walsh–Hadamard blocks Rotate
// applies to rows of head dim hd: the largest power of two dividing it, as
// llama.cpp does, or 0 when hd is not a multiple of 64 (no rotation).
func RotationBlock(hd int) int {
	if hd%64 != 0 {
		return 0
	}
	return hd & -hd
}

// Rotate multiplies every run of RotationBlock(hd) elements of x by the
// orthonormal Walsh–Hadamard matrix (its own inverse). llama.cpp applies it
// to Q and a quantized K before the dot, and to a quantized V before it is
// stored and to the attention output after: exact arithmetic is unchanged,
// but outliers are spread over the block, so block quantization loses less.
func Rotate(x []float32, hd int) {
	if b := RotationBlock(hd); b > 0 {
		if err := ops.HadamardForward(x, b, nil); err != nil {
			panic("kvcache: " + err.Error())
		}
	}
}

// encode writes one head row of src in format f.
func encode(f *quant.Format, dst []byte, src []float32) {
	switch f {
	case quant.F32:
		for i, x := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	case quant.F16:
		ops.F32ToF16(dst, src)
	case quant.Q8_0:
		for b := 0; b < len(src); b += 32 {
			QuantizeQ8(dst[b/32*34:], src[b:b+32])
		}
	default:
		if err := f.Encode(dst, src); err != nil {
			panic("kvcache: " + err.Error())
		}
	}
}

// QuantizeQ8 writes one Q8_0 block (fp16 d, 32 int8) of the 32 values x as
// ggml-cpu's quantize_row_q8_0 does on x86 — the quantizer llama.cpp uses
// both for a q8_0 cache and for the queries dotted with a quantized K:
// d = amax/127, q = round-half-even(x·(127/amax)).
func QuantizeQ8(dst []byte, x []float32) {
	var amax float32
	for _, v := range x[:32] {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	binary.LittleEndian.PutUint16(dst, half.FromFloat32(d))
	for j, v := range x[:32] {
		dst[2+j] = uint8(int8(math.RoundToEven(float64(v * id))))
	}
}

// Decode writes the float values of a run of rows of format f (as Run
// returns them) into dst.
func Decode(f *quant.Format, dst []float32, src []byte) {
	switch f {
	case quant.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case quant.F16:
		ops.F16ToF32(dst, src[:2*len(dst)])
	default:
		if err := f.Decode(dst, src); err != nil {
			panic("kvcache: " + err.Error())
		}
	}
}

// Query is one query row prepared for the dot products with keys of one
// element format: float (f32 and f16 keys) or Q8_0 blocks (quantized keys,
// as llama.cpp converts Q to K's vec_dot type).
type Query struct {
	F  []float32
	Q8 []byte
}

// Prepare sets q up for keys of format f from the head row x.
func (q *Query) Prepare(f *quant.Format, x []float32) {
	if !Quantized(f) {
		q.F = x
		q.Q8 = nil
		return
	}
	n := len(x) / 32 * 34
	if cap(q.Q8) < n {
		q.Q8 = make([]byte, n)
	}
	q.Q8 = q.Q8[:n]
	for b := 0; b < len(x); b += 32 {
		QuantizeQ8(q.Q8[b/32*34:], x[b:b+32])
	}
	q.F = nil
}

// Scratch is the working memory of the scores and accumulate kernels.
type Scratch struct{ buf []float32 }

func (s *Scratch) grow(n int) []float32 {
	if cap(s.buf) < n {
		s.buf = make([]float32, n)
	}
	return s.buf[:n]
}

// Scores sets dst[j] = q·K_j for the len(dst) keys of the run k, rows of
// hd elements of format f. Each dot is a function of its row and q alone,
// whatever the run's length: batch invariance rests on it.
func Scores(f *quant.Format, dst []float32, q *Query, k []byte, hd int, s *Scratch) {
	n := len(dst)
	switch f {
	case quant.F32, quant.F16:
		kf := s.grow(n * hd)
		Decode(f, kf, k[:n*hd*f.BlockBytes])
		for j := range dst {
			dst[j] = ops.Dot(q.F, kf[j*hd:(j+1)*hd])
		}
	case quant.Q8_0:
		dotsQ8Q8(dst, q.Q8, k, hd/32)
	case quant.Q4_0:
		dotsQ4Q8(dst, q.Q8, k, hd/32)
	default:
		panic("kvcache: no scores kernel for " + f.Name)
	}
}

// Accumulate sets acc = Σ_j p[j]·V_j over the len(p) rows of the run v
// (rows of len(acc) elements of format f), j in order.
func Accumulate(f *quant.Format, acc, p []float32, v []byte, s *Scratch) {
	hd := len(acc)
	n := len(p)
	vf := s.grow(n * hd)
	Decode(f, vf, v[:n*hd/f.BlockElems*f.BlockBytes])
	clear(acc)
	for j, w := range p {
		ops.Axpy(acc, w, vf[j*hd:(j+1)*hd])
	}
}

// dotsQ8Q8 is ggml_vec_dot_q8_0_q8_0 per key: the integer dot of each
// 32-block scaled by both fp16 scales, summed over the blocks in order.
func dotsQ8Q8(dst []float32, q, k []byte, blocks int) {
	rb := blocks * 34
	for j := range dst {
		row := k[j*rb : (j+1)*rb]
		var s float32
		for b := range blocks {
			qb, kb := q[b*34:b*34+34], row[b*34:b*34+34]
			var d int32
			for i, x := range qb[2:34] {
				d += int32(int8(x)) * int32(int8(kb[2+i]))
			}
			s += float32(d) * (fp16(qb) * fp16(kb))
		}
		dst[j] = s
	}
}

// dotsQ4Q8 is ggml_vec_dot_q4_0_q8_0 per key.
func dotsQ4Q8(dst []float32, q, k []byte, blocks int) {
	rb := blocks * 18
	for j := range dst {
		row := k[j*rb : (j+1)*rb]
		var s float32
		for b := range blocks {
			qb, kb := q[b*34:b*34+34], row[b*18:b*18+18]
			var d int32
			for i, x := range kb[2:18] {
				d += (int32(x&15) - 8) * int32(int8(qb[2+i]))
				d += (int32(x>>4) - 8) * int32(int8(qb[18+i]))
			}
			s += float32(d) * (fp16(qb) * fp16(kb))
		}
		dst[j] = s
	}
}

func fp16(b []byte) float32 { return half.ToFloat32(binary.LittleEndian.Uint16(b)) }
