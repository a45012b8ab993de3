package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzDecode decodes arbitrary bytes in every format (never a panic), and
// checks that re-encoding the values of one block fails exactly when some
// value is not finite.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 0xe4, 0x55, 0x55, 0x55}, uint8(0))
	f.Add(make([]byte, 300), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		for _, fm := range All {
			n := len(data) / fm.BlockBytes
			x := make([]float32, n*fm.BlockElems)
			if err := fm.Decode(x, data[:n*fm.BlockBytes]); err != nil {
				t.Fatalf("%s: %v", fm, err)
			}
		}
		fm := All[int(which)%len(All)]
		if len(data) < fm.BlockBytes || fm.BlockElems == 1 {
			return
		}
		x := make([]float32, fm.BlockElems)
		if err := fm.Decode(x, data[:fm.BlockBytes]); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, fm.BlockBytes)
		err := fm.Encode(out, x)
		finite := true
		for _, v := range x {
			finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		}
		if finite != (err == nil) || (err != nil && !errors.Is(err, ErrNonFinite)) {
			t.Fatalf("%s: Encode of values (finite %v) = %v", fm, finite, err)
		}
	})
}

// FuzzEncode quantizes arbitrary float32 bit patterns in every format:
// never a panic, and only ErrNonFinite as an error.
func FuzzEncode(f *testing.F) {
	seed := make([]byte, 4*256)
	for i := range 256 {
		binary.LittleEndian.PutUint32(seed[4*i:], math.Float32bits(float32(i%3-1)*0.25))
	}
	f.Add(seed)
	f.Add(make([]byte, 4*256))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		for _, fm := range All {
			n := len(x) / fm.BlockElems
			out := make([]byte, n*fm.BlockBytes)
			if err := fm.Encode(out, x[:n*fm.BlockElems]); err != nil && !errors.Is(err, ErrNonFinite) {
				t.Fatalf("%s: %v", fm, err)
			}
		}
	})
}

// FuzzTranscode transcodes arbitrary bytes between any two layouts: never a
// panic, a *TranscodeError on failure, and on success exactly the same
// decoded values (bit for bit) and the original bytes after the way back,
// except where a base-3 byte was not canonical.
func FuzzTranscode(f *testing.F) {
	f.Add(make([]byte, 2*66), uint8(8), uint8(10), uint16(256))
	f.Add(make([]byte, 4*18), uint8(11), uint8(13), uint16(128))
	f.Fuzz(func(t *testing.T, data []byte, from, to uint8, rowLen uint16) {
		src, dst := All[int(from)%len(All)], All[int(to)%len(All)]
		out, err := Transcode(dst, src, data, int(rowLen))
		if err != nil {
			var te *TranscodeError
			if !errors.As(err, &te) || out != nil {
				t.Fatalf("%s → %s: %v (%d bytes)", src, dst, err, len(out))
			}
			return
		}
		a, b := decodeBits(t, src, data), decodeBits(t, dst, out)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s → %s: element %d: %#x, want %#x", src, dst, i, b[i], a[i])
			}
		}
		back, err := Transcode(src, dst, out, int(rowLen))
		if err != nil {
			t.Fatalf("%s → %s → %s: %v", src, dst, src, err)
		}
		if c := decodeBits(t, src, back); len(c) != len(a) {
			t.Fatalf("way back: %d values, want %d", len(c), len(a))
		}
		if src.tern.codes != maskTrit && string(back) != string(data) {
			t.Fatalf("%s → %s → %s changed the bytes", src, dst, src)
		}
	})
}
