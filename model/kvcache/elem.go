package kvcache

import (
	"encoding/binary"
	"math"
	"unsafe"

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
	kb, vb := c.rowBuf()
	for h := range cfg.KVHeads {
		encode(cfg.K, kb, k[h*hd:(h+1)*hd])
		encode(cfg.V, vb, v[h*hd:(h+1)*hd])
		c.putRows(l, h, pos, kb, vb)
	}
}

// rowBuf returns scratch for one encoded K and V row. Store runs for
// many positions at once on the pool, so the scratch is per call, on the
// stack for the usual head sizes.
func (c *Cache) rowBuf() (k, v []byte) {
	var buf [2 * 4 * 256]byte
	if n := c.kRow + c.vRow; n > len(buf) {
		b := make([]byte, n)
		return b[:c.kRow], b[c.kRow:]
	}
	return buf[:c.kRow], buf[c.kRow : c.kRow+c.vRow]
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
	// D and Corr are per block the scale and the correction of the
	// unsigned-operand dot (128·Σq for Q8_0 keys, 8·Σq for Q4_0) that the
	// SIMD kernels use.
	D    []float32
	Corr []int32
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
	blocks := len(x) / 32
	if cap(q.D) < blocks {
		q.D, q.Corr = make([]float32, blocks), make([]int32, blocks)
	}
	q.D, q.Corr = q.D[:blocks], q.Corr[:blocks]
	bias := int32(128)
	if f == quant.Q4_0 {
		bias = 8
	}
	for b := range blocks {
		qb := q.Q8[b*34 : b*34+34]
		QuantizeQ8(qb, x[b*32:b*32+32])
		var sum int32
		for _, c := range qb[2:] {
			sum += int32(int8(c))
		}
		q.D[b], q.Corr[b] = fp16(qb), bias*sum
	}
	q.F = nil
}

// Block is the keys and values of one head in one page, opened for the
// kernels (Cache.Open): float keys are read transposed (Config.Transposed),
// quantized keys and all values as rows.
type Block struct {
	k, v   *quant.Format
	kh, vh []byte // the head's K and V regions of the page
	n, hd  int
	fast   bool      // the SIMD kernels take these rows
	kf, vf []float32 // decoded (generic tier; vf also for many-row fp16)
	sc     [PageSize]float32
	kbuf   []float32
	vbuf   []float32
	q4     []float32 // four query rows, for ScoresRows
}

// convertRows is the number of query rows from which a block converts
// fp16 values once rather than in every kernel call.
const convertRows = 8

// open prepares the first n positions of the head regions kh, vh; rows is
// the number of query rows the block will serve. For many rows the SIMD
// tier converts fp16 values to float32 once instead of once per row
// inside the kernels: the conversion is exact, so the results are the
// same bit for bit either way.
func (b *Block) open(c *Config, kh, vh []byte, n, rows int) {
	b.k, b.v, b.hd, b.n = c.K, c.V, c.HeadDim, n
	b.kh, b.vh = kh, vh[:n*c.RowBytes(c.V)]
	b.kf, b.vf = nil, nil
	b.fast = fast(b.hd)
	if b.fast {
		if rows >= convertRows && b.v == quant.F16 {
			b.vh, b.v = widen(&b.vbuf, b.vh), quant.F32
		}
		if rows >= convertRows && b.k == quant.F16 {
			b.kh, b.k = widen(&b.kbuf, b.kh), quant.F32
		}
		return
	}
	if !Quantized(b.k) {
		b.kf = growF(&b.kbuf, b.hd*PageSize)
		Decode(b.k, b.kf, b.kh)
	}
	b.vf = growF(&b.vbuf, n*b.hd)
	Decode(b.v, b.vf, b.vh)
}

// widen converts fp16 values into buf and returns them as float32 bytes.
func widen(buf *[]float32, src []byte) []byte {
	f := growF(buf, len(src)/2)
	ops.F16ToF32(f, src)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}

func growF(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n)
	}
	*b = (*b)[:n]
	return *b
}

// Scores sets dst[j] = q·K_j for the first len(dst) keys of the block.
// Each dot is a function of its key and q alone, whatever the number of
// keys or rows: batch invariance rests on it. Transposed keys are dotted
// dimension by dimension, q[0]·K[0][j] first.
func (b *Block) Scores(dst []float32, q *Query) {
	n, hd := len(dst), b.hd
	switch {
	case n == 0:
	case b.k == quant.Q8_0:
		dotsQ8(dst, q, b.kh[:n*hd/32*34], hd/32)
	case b.k == quant.Q4_0:
		dotsQ4(dst, q, b.kh[:n*hd/32*18], hd/32)
	case b.fast:
		// The kernels take keys in groups of 128: a page holds whole
		// groups, so the extra keys are in the page, and dropped.
		m := (n + 127) / 128 * 128
		dotsT(b.k, b.sc[:m], q.F, b.kh)
		copy(dst, b.sc[:n])
	default:
		clear(dst)
		for i, x := range q.F[:hd] {
			row := b.kf[i*PageSize : i*PageSize+n]
			for j, k := range row {
				dst[j] += x * k
			}
		}
	}
}

// ScoresRows sets dst[r·PageSize+j] = q_r·K_j for j < ns[r], for every
// row r of qs: Scores row by row, except that float32 keys (converted for
// many rows) serve four rows per pass, sharing each key load. Each score
// is formed exactly as Scores forms it.
func (b *Block) ScoresRows(dst []float32, qs []Query, ns []int) {
	r := 0
	if b.fast && b.k == quant.F32 {
		hd := b.hd
		q4 := growF(&b.q4, 4*hd)
		for ; r+4 <= len(qs); r += 4 {
			m := 0
			for i := range 4 {
				copy(q4[i*hd:(i+1)*hd], qs[r+i].F)
				m = max(m, ns[r+i])
			}
			if m == 0 {
				continue
			}
			dotsT4(dst[r*PageSize:], q4, b.kh, (m+63)/64*64)
		}
	}
	for ; r < len(qs); r++ {
		if ns[r] > 0 {
			b.Scores(dst[r*PageSize:r*PageSize+ns[r]], &qs[r])
		}
	}
}

// Accumulate sets acc = Σ_j p[j]·V_j over the first len(p) rows of the
// block, j in order.
func (b *Block) Accumulate(acc, p []float32) {
	if b.fast {
		accumulate(b.v, acc, p, b.vh)
		return
	}
	hd := b.hd
	clear(acc)
	for j, w := range p {
		ops.Axpy(acc, w, b.vf[j*hd:(j+1)*hd])
	}
}

// dotsQ8Go is ggml_vec_dot_q8_0_q8_0 per key: the integer dot of each
// 32-block scaled by both fp16 scales, summed over the blocks in order.
func dotsQ8Go(dst []float32, q, k []byte, blocks int) {
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

// dotsQ4Go is ggml_vec_dot_q4_0_q8_0 per key.
func dotsQ4Go(dst []float32, q, k []byte, blocks int) {
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

func maxGo(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	return m
}
