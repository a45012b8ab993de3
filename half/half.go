// Package half converts between float32 and the 16-bit float formats used
// by GGUF and safetensors files: IEEE binary16 (fp16) and bfloat16.
//
// Conversions to 16 bits round to nearest, ties to even, as ggml does, so
// scales written by trit are bit-identical to those written by llama.cpp.
package half

import "math"

// ToFloat32 returns the float32 value of the IEEE binary16 number h.
func ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN; keep the payload.
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: the value is mant × 2^-24, exact in float32.
	f := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// FromFloat32 returns the binary16 number nearest to f (ties to even).
// Finite values too large for fp16 become ±Inf; NaN stays NaN.
func FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Result is subnormal in fp16 (or zero).
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		q := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && q&1 == 1) {
		q++ // may carry into the exponent, which is still correct (up to Inf)
	}
	return sign | uint16(q)
}

// BF16ToFloat32 returns the float32 value of the bfloat16 number h.
func BF16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// BF16FromFloat32 returns the bfloat16 number nearest to f (ties to even).
func BF16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero.
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
