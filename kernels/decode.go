package kernels

import (
	"encoding/binary"

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

// decodeRow writes the exact values of one packed row into dst with quant's
// reference decoders (ggml's dequantize_row_*, bit for bit). Callers pass a
// whole row of a checked Matrix, so the size check cannot fail.
func decodeRow(f *quant.Format, src []byte, dst []float32) {
	if err := f.Decode(dst, src); err != nil {
		panic("kernels: " + err.Error())
	}
}

// q4kScale returns the 6-bit scale and min of Q4_K sub-block i.
func q4kScale(sc []byte, i int) (s, m uint8) {
	if i < 4 {
		return sc[i] & 63, sc[i+4] & 63
	}
	return sc[i+4]&15 | sc[i-4]>>6<<4, sc[i+4]>>4 | sc[i]>>6<<4
}
