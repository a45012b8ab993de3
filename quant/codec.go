package quant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"trit/half"
)

var (
	// ErrSize is returned when buffer lengths do not describe a whole
	// number of blocks of a format, or do not match each other.
	ErrSize = errors.New("quant: size is not a whole number of blocks")
	// ErrNonFinite is returned when a quantizer meets NaN or ±Inf.
	ErrNonFinite = errors.New("quant: non-finite value")
)

// blocks checks that elems floats and nbytes bytes are the same whole
// number of blocks of f and returns that number.
func (f *Format) blocks(elems, nbytes int) (int, error) {
	if f.decode == nil || f.BlockBytes <= 0 {
		// A Format built outside the table has no codec.
		return 0, fmt.Errorf("%w: %s is not a format of the table", ErrUnknownType, f.Name)
	}
	n := nbytes / f.BlockBytes
	if nbytes%f.BlockBytes != 0 || elems != n*f.BlockElems {
		return 0, fmt.Errorf("%w: %s: %d values and %d bytes (blocks of %d values in %d bytes)",
			ErrSize, f.Name, elems, nbytes, f.BlockElems, f.BlockBytes)
	}
	return n, nil
}

// Decode dequantizes src, a whole number of blocks of f, into dst, which
// must hold exactly the blocks' elements. The values are those of ggml's
// dequantize_row_* for f, bit for bit (computed without fused
// multiply-adds).
func (f *Format) Decode(dst []float32, src []byte) error {
	if _, err := f.blocks(len(dst), len(src)); err != nil {
		return err
	}
	f.decode(dst, src)
	return nil
}

// Encode quantizes src, a whole number of blocks of f, into dst, which must
// be exactly the blocks' size, with ggml's reference quantizer for f
// (quantize_row_*_ref). Quantized formats reject NaN and ±Inf with
// ErrNonFinite; F32, F16 and BF16 convert every value (to 16 bits with
// round-to-nearest-even).
func (f *Format) Encode(dst []byte, src []float32) error {
	if _, err := f.blocks(len(src), len(dst)); err != nil {
		return err
	}
	if f.BlockElems > 1 {
		for i, v := range src {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%w: %s: element %d is %v", ErrNonFinite, f.Name, i, v)
			}
		}
	}
	f.encode(dst, src)
	return nil
}

// Dequantize returns the n values stored in data in format f. It checks
// that data is exactly n values long before allocating, so n may come from
// an untrusted header.
func Dequantize(f *Format, data []byte, n int64) ([]float32, error) {
	if _, err := f.blocks(0, 0); err != nil {
		return nil, err
	}
	size, err := f.RowBytes(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSize, err)
	}
	if size != int64(len(data)) {
		return nil, fmt.Errorf("%w: %s: %d values need %d bytes, have %d", ErrSize, f.Name, n, size, len(data))
	}
	dst := make([]float32, n)
	f.decode(dst, data)
	return dst, nil
}

func decodeF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func encodeF32(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func decodeF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = half.ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func encodeF16(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], half.FromFloat32(v))
	}
}

func decodeBF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = half.BF16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func encodeBF16(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], half.BF16FromFloat32(v))
	}
}

// Q8_0: d (fp16), then 32 int8 codes; value = code·d.

func decodeQ8_0(dst []float32, src []byte) {
	for ; len(src) > 0; src, dst = src[34:], dst[32:] {
		d := half.ToFloat32(binary.LittleEndian.Uint16(src))
		for j, q := range src[2:34] {
			dst[j] = float32(int8(q)) * d
		}
	}
}

// encodeQ8_0 is quantize_row_q8_0_ref: d = amax/127, code = roundf(x·(1/d)).
func encodeQ8_0(dst []byte, src []float32) {
	for ; len(src) > 0; src, dst = src[32:], dst[34:] {
		d := amax(src[:32]) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(dst, half.FromFloat32(d))
		for j, v := range src[:32] {
			dst[2+j] = uint8(int8(roundClamp(float32(v*id), -127, 127)))
		}
	}
}

// Q4_0: d (fp16), then 16 bytes; element j < 16 is the low nibble of qs[j],
// element j >= 16 the high nibble of qs[j-16]; value = (nibble-8)·d.

func decodeQ4_0(dst []float32, src []byte) {
	for ; len(src) > 0; src, dst = src[18:], dst[32:] {
		d := half.ToFloat32(binary.LittleEndian.Uint16(src))
		for j, q := range src[2:18] {
			dst[j] = float32(int(q&0xf)-8) * d
			dst[j+16] = float32(int(q>>4)-8) * d
		}
	}
}

// encodeQ4_0 is quantize_row_q4_0_ref: d = max/-8 where max is the value of
// largest magnitude (the first one on ties), nibble = min(15, trunc(x·(1/d)
// + 8.5)).
func encodeQ4_0(dst []byte, src []float32) {
	for ; len(src) > 0; src, dst = src[32:], dst[18:] {
		var am, max float32
		for _, v := range src[:32] {
			if a := abs32(v); am < a {
				am, max = a, v
			}
		}
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(dst, half.FromFloat32(d))
		for j := range 16 {
			dst[2+j] = q4Nibble(src[j], id) | q4Nibble(src[j+16], id)<<4
		}
	}
}

// roundClamp returns roundf(v) clamped to [lo, hi]. For finite input with a
// normal scale v is already in range; the clamp (done in float, NaN going to
// lo) only keeps degenerate scales, whose 1/d overflows, deterministic.
func roundClamp(v float32, lo, hi int) int {
	r := math.Round(float64(v))
	switch {
	case r >= float64(hi):
		return hi
	case r >= float64(lo):
		return int(r)
	}
	return lo
}

func q4Nibble(x, id float32) uint8 {
	// The float32 conversion keeps x·id rounded before the add, as C
	// evaluates it; the value is in [0.5, 16.5] for finite input.
	v := float32(x*id) + 8.5
	switch {
	case v >= 15:
		return 15
	case v >= 0:
		return uint8(v) // truncation, like C's (int8_t) cast
	}
	return 0
}
