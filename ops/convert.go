package ops

import "trit/half"

// F16ToF32 decodes the little-endian IEEE binary16 values in src into dst.
// It panics unless len(src) == 2·len(dst).
//
// The assembly path (F16C) returns signalling NaNs quieted; every other
// value, subnormals included, is converted exactly as half.ToFloat32 does.
func F16ToF32(dst []float32, src []byte) {
	if len(src) != 2*len(dst) {
		panic("ops: F16ToF32: len(src) != 2*len(dst)")
	}
	active.f16ToF32(dst, src)
}

// F32ToF16 encodes src as little-endian IEEE binary16 values in dst,
// rounding to nearest even as half.FromFloat32 does. It panics unless
// len(dst) == 2·len(src).
func F32ToF16(dst []byte, src []float32) {
	if len(dst) != 2*len(src) {
		panic("ops: F32ToF16: len(dst) != 2*len(src)")
	}
	active.f32ToF16(dst, src)
}

// BF16ToF32 decodes the little-endian bfloat16 values in src into dst
// (exact). It panics unless len(src) == 2·len(dst).
func BF16ToF32(dst []float32, src []byte) {
	if len(src) != 2*len(dst) {
		panic("ops: BF16ToF32: len(src) != 2*len(dst)")
	}
	active.bf16ToF32(dst, src)
}

// F32ToBF16 encodes src as little-endian bfloat16 values in dst, rounding
// to nearest even as half.BF16FromFloat32 does. It panics unless
// len(dst) == 2·len(src).
func F32ToBF16(dst []byte, src []float32) {
	if len(dst) != 2*len(src) {
		panic("ops: F32ToBF16: len(dst) != 2*len(src)")
	}
	dst = dst[:2*len(src)]
	for i, f := range src {
		h := half.BF16FromFloat32(f)
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}

func f16ToF32Generic(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = half.ToFloat32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
	}
}

func bf16ToF32Generic(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = half.BF16ToFloat32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
	}
}

func f32ToF16Generic(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, f := range src {
		h := half.FromFloat32(f)
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}
