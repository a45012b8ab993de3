package quant

import (
	"encoding/binary"
	"math"

	"trit/half"
)

// Codes. Every ternary layout stores value (code-1)*d with code in 0..3 and
// one fp16 scale d per block: 0 → −d, 1 → 0, 2 → +d, 3 → +2d. Q1_0 uses
// codes 0 and 2 only, the base-3 packs 0..2, the 2-bit packs all four
// (3 never occurs in ternary files, but a 2-bit pack can carry it).
const (
	maskBinary = 1<<0 | 1<<2
	maskTrit   = 1<<0 | 1<<1 | 1<<2
	mask2Bit   = 1<<0 | 1<<1 | 1<<2 | 1<<3
)

// maxTernaryBlock bounds BlockElems of the ternary layouts, for stack
// buffers.
const maxTernaryBlock = 256

// ternary is the code-level view of a ternary layout: a block is one fp16
// scale and BlockElems codes in element order.
type ternary struct {
	// codes has bit c set when code c is representable.
	codes uint8
	// unpack reads the codes of block blk into codes and returns the
	// scale's fp16 bits.
	unpack func(codes []uint8, blk []byte) uint16
	// pack writes block blk from codes (all representable) and a scale.
	pack func(blk []byte, codes []uint8, d uint16)
	// quantize is the reference quantizer: codes and the fp16 scale of
	// one block of finite values x.
	quantize func(codes []uint8, x []float32) uint16
}

// ternaryFormat completes f with the codec built for its block size.
func ternaryFormat(f *Format, codec func(elems int) *ternary) *Format {
	t := codec(f.BlockElems)
	f.tern = t
	f.decode = func(dst []float32, src []byte) {
		var codes [maxTernaryBlock]uint8
		n := f.BlockElems
		for len(src) > 0 {
			d := half.ToFloat32(t.unpack(codes[:n], src))
			// (code-1)*d as ggml computes it: the float product with
			// -1, 0, 1, 2; -d for code 0 is the same bits for every
			// non-NaN d.
			vals := [4]float32{-d, 0 * d, d, 2 * d}
			for i, c := range codes[:n] {
				dst[i] = vals[c]
			}
			src, dst = src[f.BlockBytes:], dst[n:]
		}
	}
	f.encode = func(dst []byte, src []float32) {
		var codes [maxTernaryBlock]uint8
		n := f.BlockElems
		for len(src) > 0 {
			d := t.quantize(codes[:n], src[:n])
			t.pack(dst, codes[:n], d)
			src, dst = src[n:], dst[f.BlockBytes:]
		}
	}
	return f
}

// amax returns max |x|, as ggml's reference quantizers compute it.
func amax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// roundCode returns clamp(roundf(v)+1, 0, hi): the code of v = x/d, rounded
// half away from zero like C's roundf and lroundf.
func roundCode(v float32, hi int) uint8 {
	return uint8(roundClamp(v, -1, hi-1) + 1)
}

// absmaxQuantize is the quantizer of Q2_0, PQ2_0, TQ1_0, TQ2_0 and PTQ1_0:
// d = max|x| (in fp32; stored as fp16), code = round(x·(1/d)) + 1.
func absmaxQuantize(hi int) func(codes []uint8, x []float32) uint16 {
	return func(codes []uint8, x []float32) uint16 {
		d := amax(x)
		var id float32
		if d > 0 {
			id = 1 / d
		}
		for i, v := range x {
			codes[i] = roundCode(float32(v*id), hi)
		}
		return half.FromFloat32(d)
	}
}

// q2Codec is the positional 2-bit layout of Q2_0 (group 128), its group-64
// upstream variant and PQ2_0: d first, then element j in bits 2(j%4) of
// qs[j/4].
func q2Codec(elems int) *ternary {
	return &ternary{
		codes: mask2Bit,
		unpack: func(codes []uint8, blk []byte) uint16 {
			for i, b := range blk[2 : 2+elems/4] {
				c := codes[4*i : 4*i+4]
				c[0], c[1], c[2], c[3] = b&3, b>>2&3, b>>4&3, b>>6
			}
			return binary.LittleEndian.Uint16(blk)
		},
		pack: func(blk []byte, codes []uint8, d uint16) {
			binary.LittleEndian.PutUint16(blk, d)
			qs := blk[2 : 2+elems/4]
			for i := range qs {
				c := codes[4*i : 4*i+4]
				qs[i] = c[0] | c[1]<<2 | c[2]<<4 | c[3]<<6
			}
		},
		// ggml clamps to 0..3 although finite input never rounds to 3.
		quantize: absmaxQuantize(3),
	}
}

// q1_0Codec is the binary Q1_0 layout: d first, then element j in bit j%8
// of qs[j/8], set for +d.
func q1_0Codec(elems int) *ternary {
	return &ternary{
		codes: maskBinary,
		unpack: func(codes []uint8, blk []byte) uint16 {
			for i, b := range blk[2 : 2+elems/8] {
				c := codes[8*i : 8*i+8]
				for k := range c {
					c[k] = (b >> k & 1) * 2
				}
			}
			return binary.LittleEndian.Uint16(blk)
		},
		pack: func(blk []byte, codes []uint8, d uint16) {
			binary.LittleEndian.PutUint16(blk, d)
			qs := blk[2 : 2+elems/8]
			for i := range qs {
				var b uint8
				for k, c := range codes[8*i : 8*i+8] {
					b |= c >> 1 << k
				}
				qs[i] = b
			}
		},
		// ggml's quantize_row_q1_0_ref: d is the mean |x| (summed in
		// order), and the bit is x >= 0.
		quantize: func(codes []uint8, x []float32) uint16 {
			var sum float32
			for i, v := range x {
				sum += abs32(v)
				codes[i] = 0
				if v >= 0 {
					codes[i] = 2
				}
			}
			return half.FromFloat32(sum / float32(len(x)))
		},
	}
}

// tq2_0Codec is upstream TQ2_0: qs[64] then d. It is not positional: element
// e is in bits 2l of qs[32c+m] with c = e/128, l = (e%128)/32, m = e%32.
func tq2_0Codec(int) *ternary {
	return &ternary{
		codes: mask2Bit,
		unpack: func(codes []uint8, blk []byte) uint16 {
			for i, b := range blk[:64] {
				// byte 32c+m holds elements 128c+m, +32, +64, +96.
				e := 128*(i/32) + i%32
				codes[e], codes[e+32], codes[e+64], codes[e+96] = b&3, b>>2&3, b>>4&3, b>>6
			}
			return binary.LittleEndian.Uint16(blk[64:])
		},
		pack: func(blk []byte, codes []uint8, d uint16) {
			for i := range 64 {
				e := 128*(i/32) + i%32
				blk[i] = codes[e] | codes[e+32]<<2 | codes[e+64]<<4 | codes[e+96]<<6
			}
			binary.LittleEndian.PutUint16(blk[64:], d)
		},
		// quantize_row_tq2_0_ref: lroundf(x*id)+1; finite input stays in 0..2.
		quantize: absmaxQuantize(2),
	}
}

// tritLayout describes a base-3 pack (TQ1_0, PTQ1_0). Each stage of width w
// at byte offset off holds 5w elements: element base+w·n+m is trit n of byte
// off+m. The qh stage holds 4 trits per byte the same way. The scale is
// last.
type tritLayout struct {
	stages [2]tritStage // 5 trits per byte
	qh     tritStage    // 4 trits per byte
	dOff   int
}

type tritStage struct{ off, width int }

// pow3 is 3^n for the trit positions of a byte.
var pow3 = [5]uint8{1, 3, 9, 27, 81}

// trit returns trit n (0 = most significant) of a base-3 byte: the byte is
// ceil(q·256/243) for the 5-trit number q, so multiplying by 3^n (mod 256)
// brings trit n to the top and ×3>>8 reads it.
func trit(b uint8, n int) uint8 {
	p := b * pow3[n]
	return uint8(uint16(p) * 3 >> 8)
}

// tritsOf[b] holds the five trits of byte b, for fast unpacking.
var tritsOf = func() (t [256][5]uint8) {
	for b := range t {
		for n := range t[b] {
			t[b][n] = trit(uint8(b), n)
		}
	}
	return t
}()

// packTrits returns the byte for trits t[0], t[stride], ... (count of them,
// 4 or 5; a 4-trit byte is shifted up by one trit as ggml does).
func packTrits(t []uint8, stride, count int) uint8 {
	var q uint16
	for n := range count {
		q = q*3 + uint16(t[n*stride])
	}
	if count == 4 {
		q *= 3
	}
	// Ceiling division: 243 = 3^5.
	return uint8((q*256 + 242) / 243)
}

func tritCodec(l tritLayout) *ternary {
	return &ternary{
		codes: maskTrit,
		unpack: func(codes []uint8, blk []byte) uint16 {
			base := 0
			for _, s := range l.stages {
				for m, b := range blk[s.off : s.off+s.width] {
					t := &tritsOf[b]
					for n := range 5 {
						codes[base+s.width*n+m] = t[n]
					}
				}
				base += 5 * s.width
			}
			for h, b := range blk[l.qh.off : l.qh.off+l.qh.width] {
				t := &tritsOf[b]
				for n := range 4 {
					codes[base+l.qh.width*n+h] = t[n]
				}
			}
			return binary.LittleEndian.Uint16(blk[l.dOff:])
		},
		pack: func(blk []byte, codes []uint8, d uint16) {
			base := 0
			for _, s := range l.stages {
				for m := range s.width {
					blk[s.off+m] = packTrits(codes[base+m:], s.width, 5)
				}
				base += 5 * s.width
			}
			for h := range l.qh.width {
				blk[l.qh.off+h] = packTrits(codes[base+h:], l.qh.width, 4)
			}
			binary.LittleEndian.PutUint16(blk[l.dOff:], d)
		},
		quantize: absmaxQuantize(2),
	}
}

// tq1_0Codec is upstream TQ1_0: qs[48] (stages of 32 and 16 bytes), qh[4], d.
func tq1_0Codec(int) *ternary {
	return tritCodec(tritLayout{stages: [2]tritStage{{0, 32}, {32, 16}}, qh: tritStage{48, 4}, dOff: 52})
}

// ptq1_0Codec is Prism's PTQ1_0: qs[24] (stages of 16 and 8 bytes), qh[2], d.
func ptq1_0Codec(int) *ternary {
	return tritCodec(tritLayout{stages: [2]tritStage{{0, 16}, {16, 8}}, qh: tritStage{24, 2}, dOff: 26})
}
