package quant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"trit/half"
)

// block builds one block of f: every byte fill, then the bytes of set, then
// the fp16 scale d at byte offset dOff (when dOff >= 0).
func block(f *Format, fill byte, set map[int]byte, dOff int, d uint16) []byte {
	b := bytes.Repeat([]byte{fill}, f.BlockBytes)
	for i, v := range set {
		b[i] = v
	}
	if dOff >= 0 {
		binary.LittleEndian.PutUint16(b[dOff:], d)
	}
	return b
}

// ternaryWant returns the expected block values: scale·t for the elements
// in ts (t in -1..2), 0 elsewhere.
func ternaryWant(n int, scale float32, ts map[int]float32) func(e int) float32 {
	return func(e int) float32 { return ts[e] * scale }
}

func TestDecodeGolden(t *testing.T) {
	// Q4_K sub-block scales and mins, packed by hand into scales[12] below.
	k4sc := [8]float32{1, 2, 3, 4, 17, 33, 50, 63}
	k4m := [8]float32{0, 1, 2, 3, 16, 32, 48, 5}
	k4codes := map[int]float32{0: 1, 32: 2, 223: 7, 255: 15}
	// Q6_K: element e uses scales[e/16]; codes are stored +32.
	k6sc := [16]float32{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 127, -128}
	k6codes := map[int]float32{0: 63, 69: 33, 180: 42, 255: 5}
	k6scBytes := map[int]byte{}
	for i, s := range k6sc {
		k6scBytes[192+i] = byte(int8(s))
	}
	// ql[0], qh[0]: element 0 = 63; ql[5] high, qh[5] bits 4-5: element
	// 69 = 33; ql[116] low, qh[52] bits 2-3: element 180 = 42; ql[127]
	// high: element 255 = 5.
	for i, v := range map[int]byte{0: 0x0f, 128: 0x03, 5: 0x10, 133: 0x20, 116: 0x0a, 180: 0x08, 127: 0x50} {
		k6scBytes[i] = v
	}

	tests := []struct {
		name string
		f    *Format
		blk  []byte
		want func(e int) float32
	}{
		{"F32", F32, []byte{0x00, 0x00, 0xc0, 0xbf}, func(int) float32 { return -1.5 }},
		{"F16", F16, []byte{0x55, 0x35}, func(int) float32 { return 0.333251953125 }},
		{"F16 subnormal", F16, []byte{0x01, 0x80}, func(int) float32 { return -5.960464477539063e-08 }},
		{"BF16", BF16, []byte{0xc0, 0xbf}, func(int) float32 { return -1.5 }},
		{"Q8_0", Q8_0, block(Q8_0, 0, map[int]byte{2: 1, 3: 0xfe, 4: 127, 33: 0x80}, 0, 0x3800),
			func(e int) float32 { return map[int]float32{0: 0.5, 1: -1, 2: 63.5, 31: -64}[e] }},
		// Element j < 16 is the low nibble of qs[j], j >= 16 the high
		// nibble of qs[j-16]; 8 is zero.
		{"Q4_0", Q4_0, block(Q4_0, 0x88, map[int]byte{2: 0x90, 3: 0x0f}, 0, 0x3c00),
			func(e int) float32 { return map[int]float32{0: -8, 16: 1, 1: 7, 17: -8}[e] }},
		{"Q4_K", Q4_K, block(Q4_K, 0, map[int]byte{
			4: 0x41, 5: 0x82, 6: 0xc3, 7: 0xc4, 8: 0x40, 9: 0x81, 10: 0xc2, 11: 0x03, 12: 0x01, 13: 0x01, 14: 0x02, 15: 0x5f,
			16 + 0: 0x21, 16 + 96 + 31: 0xf7,
			2: 0x00, 3: 0x38, // dmin = 0.5
		}, 0, 0x3c00),
			func(e int) float32 { return k4sc[e/32]*k4codes[e] - 0.5*k4m[e/32] }},
		{"Q6_K", Q6_K, block(Q6_K, 0, k6scBytes, 208, 0x3800),
			func(e int) float32 { return 0.5 * k6sc[e/16] * (k6codes[e] - 32) }},
		// Bit j%8 of qs[j/8], LSB first; set is +d.
		{"Q1_0", Q1_0, block(Q1_0, 0, map[int]byte{2: 0x01, 17: 0x80}, 0, 0x3555),
			func(e int) float32 {
				if e == 0 || e == 127 {
					return 0.333251953125
				}
				return -0.333251953125
			}},
		// Element j in bits 2(j%4) of qs[j/4]; codes 0..3 → -d, 0, +d, +2d.
		{"Q2_0", Q2_0, block(Q2_0, 0x55, map[int]byte{2: 0xe4, 33: 0x06}, 0, 0x4000),
			ternaryWant(128, 2, map[int]float32{0: -1, 2: 1, 3: 2, 124: 1, 126: -1, 127: -1})},
		{"Q2_0_g64", Q2_0g64, block(Q2_0g64, 0x55, map[int]byte{2: 0xe4, 17: 0x06}, 0, 0x4000),
			ternaryWant(64, 2, map[int]float32{0: -1, 2: 1, 3: 2, 60: 1, 62: -1, 63: -1})},
		{"PQ2_0", PQ2_0, block(PQ2_0, 0x55, map[int]byte{2: 0xe4, 33: 0x06}, 0, 0x4000),
			ternaryWant(128, 2, map[int]float32{0: -1, 2: 1, 3: 2, 124: 1, 126: -1, 127: -1})},
		// Element e in bits 2l of qs[32c+m], c = e/128, l = e%128/32, m = e%32;
		// d last.
		{"TQ2_0", TQ2_0, block(TQ2_0, 0x55, map[int]byte{0: 0x92, 32: 0x54, 40: 0x65, 63: 0x15}, 64, 0x3c00),
			ternaryWant(256, 1, map[int]float32{0: 1, 32: -1, 96: 1, 128: -1, 200: 1, 255: -1})},
		// Base-3: 0x80 is five zeros, 0x7f four (qh). qs[0] = 186 holds
		// trits 2,0,1,1,2 of elements 0,32,64,96,128; qs[37] = 71 holds
		// 0,2,1,1,1 of 165,181,197,213,229; qh[3] = 121 holds 1,1,0,2 of
		// 243,247,251,255.
		{"TQ1_0", TQ1_0, block(TQ1_0, 0x80, map[int]byte{0: 186, 37: 71, 48: 0x7f, 49: 0x7f, 50: 0x7f, 51: 121}, 52, 0x3c00),
			ternaryWant(256, 1, map[int]float32{0: 1, 32: -1, 128: 1, 165: -1, 181: 1, 251: -1, 255: 1})},
		// qs[3] = 55 holds 0,1,2,2,1 of elements 3,19,35,51,67; qs[23] = 255
		// holds 2,2,2,2,2 of 87,95,...,119; qh[1] = 171 holds 2,0,0,0 of
		// 121,123,125,127.
		{"PTQ1_0", PTQ1_0, block(PTQ1_0, 0x80, map[int]byte{3: 55, 23: 255, 24: 0x7f, 25: 171}, 26, 0x3800),
			ternaryWant(128, 0.5, map[int]float32{3: -1, 35: 1, 51: 1, 87: 1, 95: 1, 103: 1, 111: 1, 119: 1, 121: 1, 123: -1, 125: -1, 127: -1})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float32, tt.f.BlockElems)
			if err := tt.f.Decode(got, tt.blk); err != nil {
				t.Fatal(err)
			}
			for e, v := range got {
				if w := tt.want(e); v != w {
					t.Errorf("element %d = %g, want %g", e, v, w)
				}
			}
		})
	}
}

func TestDecodeEncodeSizeErrors(t *testing.T) {
	for _, f := range All {
		for _, c := range []struct{ elems, bytes int }{
			{f.BlockElems, f.BlockBytes - 1},
			{f.BlockElems + 1, f.BlockBytes},
			{2 * f.BlockElems, f.BlockBytes},
			{0, f.BlockBytes},
		} {
			if err := f.Decode(make([]float32, c.elems), make([]byte, c.bytes)); !errors.Is(err, ErrSize) {
				t.Errorf("%s.Decode(%d values, %d bytes) = %v, want ErrSize", f, c.elems, c.bytes, err)
			}
			if err := f.Encode(make([]byte, c.bytes), make([]float32, c.elems)); !errors.Is(err, ErrSize) {
				t.Errorf("%s.Encode(%d bytes, %d values) = %v, want ErrSize", f, c.bytes, c.elems, err)
			}
		}
		if err := f.Decode(nil, nil); err != nil {
			t.Errorf("%s.Decode of nothing: %v", f, err)
		}
	}
}

// A Format literal made outside the table has no codec: an error, not a
// panic.
func TestFormatWithoutCodec(t *testing.T) {
	for _, f := range []*Format{{Name: "zero"}, {Name: "copy", BlockElems: 32, BlockBytes: 34}} {
		if err := f.Decode(make([]float32, 32), make([]byte, 34)); !errors.Is(err, ErrUnknownType) {
			t.Errorf("%s: Decode = %v", f.Name, err)
		}
		if err := f.Encode(make([]byte, 34), make([]float32, 32)); !errors.Is(err, ErrUnknownType) {
			t.Errorf("%s: Encode = %v", f.Name, err)
		}
		if _, err := Dequantize(f, make([]byte, 34), 32); !errors.Is(err, ErrUnknownType) {
			t.Errorf("%s: Dequantize = %v", f.Name, err)
		}
		if _, err := Transcode(Q2_0, f, make([]byte, 34), 128); !errors.Is(err, ErrNotTernary) {
			t.Errorf("%s: Transcode = %v", f.Name, err)
		}
	}
}

func TestEncodeNonFinite(t *testing.T) {
	for _, f := range All {
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			x := make([]float32, f.BlockElems)
			x[len(x)-1] = bad
			err := f.Encode(make([]byte, f.BlockBytes), x)
			if f.BlockElems > 1 && !errors.Is(err, ErrNonFinite) {
				t.Errorf("%s.Encode(%v) = %v, want ErrNonFinite", f, bad, err)
			}
			if f.BlockElems == 1 && err != nil {
				t.Errorf("%s.Encode(%v) = %v, want nil", f, bad, err)
			}
		}
	}
}

func TestDequantize(t *testing.T) {
	data := block(Q2_0, 0x55, map[int]byte{2: 0x56}, 0, 0x3c00)
	got, err := Dequantize(Q2_0, data, 128)
	if err != nil || len(got) != 128 || got[0] != 1 || got[1] != 0 {
		t.Fatalf("Dequantize = %v (len %d), %v", got[:2], len(got), err)
	}
	// A huge n from a corrupt header must fail before allocating.
	for _, n := range []int64{1 << 40, 64, -128, 256} {
		if _, err := Dequantize(Q2_0, data, n); !errors.Is(err, ErrSize) {
			t.Errorf("Dequantize(n=%d) = %v, want ErrSize", n, err)
		}
	}
}

// randTernary returns random codes in 0..2 (0 or 2 when binary) with at
// least one nonzero value, and a random positive finite fp16 scale.
func randTernary(r *rand.Rand, n int, binary bool) ([]uint8, uint16) {
	codes := make([]uint8, n)
	for i := range codes {
		if binary {
			codes[i] = uint8(r.IntN(2)) * 2
		} else {
			codes[i] = uint8(r.IntN(3))
		}
	}
	codes[r.IntN(n)] = uint8(r.IntN(2)) * 2
	return codes, uint16(1 + r.IntN(0x7bff))
}

func ternaryFormats() []*Format {
	var out []*Format
	for _, f := range All {
		if f.Ternary {
			out = append(out, f)
		}
	}
	return out
}

// Encode must give back the bytes of a block that ggml's quantizer wrote,
// and Decode∘Encode must be exact on ternary input {-s, 0, +s} (binary
// {-s, +s} for Q1_0) with s fp16-representable.
func TestTernaryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range ternaryFormats() {
		t.Run(f.Name, func(t *testing.T) {
			for range 200 {
				codes, d := randTernary(r, f.BlockElems, f == Q1_0)
				blk := make([]byte, f.BlockBytes)
				f.tern.pack(blk, codes, d)

				x := make([]float32, f.BlockElems)
				if err := f.Decode(x, blk); err != nil {
					t.Fatal(err)
				}
				s := half.ToFloat32(d)
				for i, c := range codes {
					if want := float32(int(c)-1) * s; x[i] != want {
						t.Fatalf("element %d = %g, want %g", i, x[i], want)
					}
				}
				again := bytes.Repeat([]byte{0xff}, f.BlockBytes) // Encode must overwrite every byte
				if err := f.Encode(again, x); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, blk) {
					t.Fatalf("Encode(Decode(block)) = % x\nwant % x", again, blk)
				}
			}
		})
	}
}

// Unpack must invert pack for every representable code.
func TestTernaryPackUnpack(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range ternaryFormats() {
		for range 100 {
			codes := make([]uint8, f.BlockElems)
			for i := range codes {
				for {
					codes[i] = uint8(r.IntN(4))
					if f.tern.codes>>codes[i]&1 != 0 {
						break
					}
				}
			}
			d := uint16(r.Uint32())
			blk := make([]byte, f.BlockBytes)
			f.tern.pack(blk, codes, d)
			got := make([]uint8, f.BlockElems)
			if gd := f.tern.unpack(got, blk); gd != d || !bytes.Equal(got, codes) {
				t.Fatalf("%s: unpack(pack(codes, %#x)) = %v, %#x", f, d, got, gd)
			}
		}
	}
}

func TestQuantizerGolden(t *testing.T) {
	tests := []struct {
		name string
		f    *Format
		x    []float32
		want []byte
	}{
		// d = amax = 2; 1 → round(0.5) = 1 (half away from zero) → code 2.
		{"Q2_0_g64 rounding", Q2_0g64, append([]float32{2, -2, 1, -1, 0.9, -0.9}, make([]float32, 58)...),
			append([]byte{0x00, 0x40, 2 | 0<<2 | 2<<4 | 0<<6}, bytes.Repeat([]byte{0x55}, 15)...)},
		// d = mean |x| = (1+3)/128; bit = x >= 0, so -0 and 0 are +d.
		{"Q1_0 mean", Q1_0, append([]float32{1, -3, float32(math.Copysign(0, -1))}, make([]float32, 125)...),
			append([]byte{0x00, 0x28, 0xfd}, bytes.Repeat([]byte{0xff}, 15)...)},
		// d = amax/127 = 1 → codes are the values.
		{"Q8_0", Q8_0, append([]float32{127, -5, 2.5, -2.5}, make([]float32, 28)...),
			append([]byte{0x00, 0x3c, 127, 0xfb, 3, 0xfd}, make([]byte, 28)...)},
		// max = -8 → d = 1: nibble = trunc(x + 8.5).
		{"Q4_0", Q4_0, append([]float32{-8, 7, 0.5, -0.5}, make([]float32, 28)...),
			append([]byte{0x00, 0x3c, 0x80, 0x8f, 0x89, 0x88}, bytes.Repeat([]byte{0x88}, 12)...)},
		{"Q4_K zero", Q4_K, make([]float32, 256), make([]byte, 144)},
		{"Q6_K zero", Q6_K, make([]float32, 256), make([]byte, 210)},
		{"F16", F16, []float32{65520}, []byte{0x00, 0x7c}},
		{"BF16", BF16, []float32{1.00390625}, []byte{0x80, 0x3f}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]byte, len(tt.want))
			if err := tt.f.Encode(got, tt.x); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("Encode = % x\nwant     % x", got, tt.want)
			}
		})
	}
}

// Decode∘Encode of non-ternary formats stays within the format's step.
func TestEncodeAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tests := []struct {
		f   *Format
		tol float64 // max |error| relative to the block's max |x|
	}{
		{F32, 0},
		{F16, 1.0 / 1024},
		{BF16, 1.0 / 128},
		{Q8_0, 1.0 / 127},
		{Q4_0, 1.0 / 8},
		{Q4_K, 1.0 / 8},
		{Q6_K, 1.0 / 24},
	}
	for _, tt := range tests {
		n := 4 * 256
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64()) * float32(1+i/256)
		}
		data := bytes.Repeat([]byte{0xff}, n/tt.f.BlockElems*tt.f.BlockBytes) // Encode must overwrite every byte
		if err := tt.f.Encode(data, x); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, n)
		if err := tt.f.Decode(y, data); err != nil {
			t.Fatal(err)
		}
		for b := 0; b < n; b += 256 {
			m := float64(amax(x[b : b+256]))
			for i := b; i < b+256; i++ {
				if e := math.Abs(float64(y[i] - x[i])); e > tt.tol*m {
					t.Errorf("%s: element %d: %g → %g, error %g > %g", tt.f, i, x[i], y[i], e, tt.tol*m)
					break
				}
			}
		}
	}
}

// The magic-number rounding of ggml's nearest_int is ties-to-even.
func TestNearestInt(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want int
	}{{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.6, -3}, {4194303, 4194303}, {-4194303, -4194303}} {
		if got := nearestInt(c.in); got != c.want {
			t.Errorf("nearestInt(%g) = %d, want %d", c.in, got, c.want)
		}
	}
}
