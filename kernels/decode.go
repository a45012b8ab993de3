package kernels

import (
	"encoding/binary"
	"math"

	"trit/half"
	"trit/quant"
)

// fp16 reads a little-endian IEEE binary16 value as float32.
func fp16(b []byte) float32 { return half.ToFloat32(binary.LittleEndian.Uint16(b)) }

// trits maps a base-3 packed byte (TQ1_0/PTQ1_0) to its five trits, most
// significant first: trit n is ((byte·3^n mod 256)·3) >> 8.
var trits = func() (t [256][5]uint8) {
	for b := range 256 {
		p := uint8(b)
		for n := range 5 {
			t[b][n] = uint8(uint16(p) * 3 >> 8)
			p *= 3
		}
	}
	return t
}()

// decodeRow writes the exact values of one packed row into dst.
func decodeRow(f *quant.Format, src []byte, dst []float32) {
	switch f {
	case quant.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		return
	case quant.F16:
		for i := range dst {
			dst[i] = half.ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return
	case quant.BF16:
		for i := range dst {
			dst[i] = half.BF16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return
	}
	var codes [256]int8
	be, bb := f.BlockElems, f.BlockBytes
	for b := 0; b < len(dst)/be; b++ {
		blk := src[b*bb : (b+1)*bb]
		out := dst[b*be : (b+1)*be]
		switch f {
		case quant.Q8_0:
			d := fp16(blk)
			for j := range 32 {
				out[j] = d * float32(int8(blk[2+j]))
			}
		case quant.Q4_0:
			d := fp16(blk)
			for j := range 16 {
				out[j] = d * float32(int(blk[2+j]&15)-8)
				out[j+16] = d * float32(int(blk[2+j]>>4)-8)
			}
		case quant.Q4_K:
			decodeQ4K(blk, out)
		case quant.Q6_K:
			decodeQ6K(blk, out)
		default:
			d := ternaryCodes(f, blk, codes[:be])
			for j, c := range codes[:be] {
				out[j] = float32(c) * d
			}
		}
	}
}

// ternaryCodes writes the signed codes (−1, 0, +1; Q2_0 also +2) of one
// ternary or binary block in element order and returns the block scale.
func ternaryCodes(f *quant.Format, blk []byte, codes []int8) float32 {
	switch f {
	case quant.Q2_0, quant.PQ2_0, quant.Q2_0g64:
		for j := range codes {
			codes[j] = int8(blk[2+j/4]>>(2*(j%4))&3) - 1
		}
		return fp16(blk)
	case quant.Q1_0:
		for j := range codes {
			codes[j] = int8(blk[2+j/8]>>(j%8)&1)*2 - 1
		}
		return fp16(blk)
	case quant.TQ2_0:
		for e := range codes {
			c, l, m := e/128, e%128/32, e%32
			codes[e] = int8(blk[32*c+m]>>(2*l)&3) - 1
		}
		return fp16(blk[64:])
	case quant.TQ1_0:
		tritCodes(blk, codes, [3]int{32, 16, 4}, 48)
		return fp16(blk[52:])
	case quant.PTQ1_0:
		tritCodes(blk, codes, [3]int{16, 8, 2}, 24)
		return fp16(blk[26:])
	}
	panic("kernels: not a ternary format: " + f.Name)
}

// tritCodes decodes the TQ1_0-style trit pack: a stage of w[0] bytes, one
// of w[1] bytes (five trits each), then w[2] qh bytes at offset qh with four
// trits each; within a stage element base+w·n+m is trit n of byte m.
func tritCodes(blk []byte, codes []int8, w [3]int, qh int) {
	e := 0
	off := 0
	for s, width := range w {
		nt := 5
		if s == 2 {
			nt, off = 4, qh
		}
		for n := range nt {
			for m := range width {
				codes[e+width*n+m] = int8(trits[blk[off+m]][n]) - 1
			}
		}
		e += width * nt
		off += width
	}
}

// q4kScale returns the 6-bit scale and min of Q4_K sub-block i.
func q4kScale(sc []byte, i int) (s, m uint8) {
	if i < 4 {
		return sc[i] & 63, sc[i+4] & 63
	}
	return sc[i+4]&15 | sc[i-4]>>6<<4, sc[i+4]>>4 | sc[i]>>6<<4
}

func decodeQ4K(blk []byte, out []float32) {
	d, dmin := fp16(blk), fp16(blk[2:])
	sc, qs := blk[4:16], blk[16:144]
	for c := range 4 {
		s0, m0 := q4kScale(sc, 2*c)
		s1, m1 := q4kScale(sc, 2*c+1)
		for l := range 32 {
			q := qs[32*c+l]
			out[64*c+l] = d*float32(s0)*float32(q&15) - dmin*float32(m0)
			out[64*c+32+l] = d*float32(s1)*float32(q>>4) - dmin*float32(m1)
		}
	}
}

// q6kValue returns the signed 6-bit code and scale index of element t·32+l
// in half h of a Q6_K block.
func q6kValue(blk []byte, h, t, l int) (q int, is int) {
	ql, qh := blk[64*h:], blk[128+32*h:]
	var lo uint8
	switch t {
	case 0:
		lo = ql[l] & 15
	case 1:
		lo = ql[l+32] & 15
	case 2:
		lo = ql[l] >> 4
	default:
		lo = ql[l+32] >> 4
	}
	return int(lo|(qh[l]>>(2*t)&3)<<4) - 32, 8*h + l/16 + 2*t
}

func decodeQ6K(blk []byte, out []float32) {
	d := fp16(blk[208:])
	for h := range 2 {
		for t := range 4 {
			for l := range 32 {
				q, is := q6kValue(blk, h, t, l)
				out[128*h+32*t+l] = d * float32(int8(blk[192+is])) * float32(q)
			}
		}
	}
}
