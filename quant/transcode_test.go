package quant

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// Every 5-trit and 4-trit number packs to a byte that decodes back to its
// trits, and re-encoding the decoded trits gives the same byte: ggml's
// ceiling formula is canonical. There are 243 and 81 such bytes; the other
// bytes still decode to trits in 0..2.
func TestTritBytesCanonical(t *testing.T) {
	for _, count := range []int{5, 4} {
		seen := map[uint8]bool{}
		total := 1
		for range count {
			total *= 3
		}
		for q := range total {
			var tr [5]uint8
			for n, v := count-1, q; n >= 0; n, v = n-1, v/3 {
				tr[n] = uint8(v % 3)
			}
			b := packTrits(tr[:], 1, count)
			if seen[b] {
				t.Fatalf("%d trits: byte %#x for two numbers", count, b)
			}
			seen[b] = true
			var back [5]uint8
			for n := range count {
				back[n] = trit(b, n)
			}
			if back != tr {
				t.Fatalf("%d trits %v → byte %#x → %v", count, tr[:count], b, back[:count])
			}
			if count == 4 && trit(b, 4) != 0 {
				t.Fatalf("4-trit byte %#x has fifth trit %d", b, trit(b, 4))
			}
			if again := packTrits(back[:], 1, count); again != b {
				t.Fatalf("%d trits: byte %#x re-encodes to %#x", count, b, again)
			}
		}
		if len(seen) != total {
			t.Errorf("%d trits: %d distinct bytes, want %d", count, len(seen), total)
		}
	}
	for b := range 256 {
		for n := range 5 {
			if v := trit(uint8(b), n); v > 2 {
				t.Fatalf("trit(%#x, %d) = %d", b, n, v)
			}
		}
	}
}

// randRows returns rows×rowLen random codes with one random scale per 256
// elements, so that every ternary layout can hold them. Codes are 0..2
// (0 or 2 when binary), or 0..3 when twoBit.
func randRows(r *rand.Rand, n int, binary, twoBit bool) ([]uint8, []uint16) {
	codes := make([]uint8, n)
	for i := range codes {
		switch {
		case binary:
			codes[i] = uint8(r.IntN(2)) * 2
		case twoBit:
			codes[i] = uint8(r.IntN(4))
		default:
			codes[i] = uint8(r.IntN(3))
		}
	}
	scales := make([]uint16, n/256)
	for i := range scales {
		scales[i] = uint16(r.Uint32()) // any bits, NaN included: they must survive
	}
	return codes, scales
}

// pack writes codes and per-256 scales into layout f.
func pack(f *Format, codes []uint8, scales []uint16) []byte {
	out := make([]byte, len(codes)/f.BlockElems*f.BlockBytes)
	for b := range len(codes) / f.BlockElems {
		e := b * f.BlockElems
		f.tern.pack(out[b*f.BlockBytes:], codes[e:e+f.BlockElems], scales[e/256])
	}
	return out
}

func decodeBits(t *testing.T, f *Format, data []byte) []uint32 {
	t.Helper()
	x := make([]float32, len(data)/f.BlockBytes*f.BlockElems)
	if err := f.Decode(x, data); err != nil {
		t.Fatal(err)
	}
	bits := make([]uint32, len(x))
	for i, v := range x {
		bits[i] = math.Float32bits(v)
	}
	return bits
}

func TestTranscodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const rowLen, rows = 512, 3
	formats := ternaryFormats()
	for _, src := range formats {
		for _, dst := range formats {
			binary := src == Q1_0 || dst == Q1_0
			twoBit := src.tern.codes == mask2Bit && dst.tern.codes == mask2Bit
			codes, scales := randRows(r, rowLen*rows, binary, twoBit)
			data := pack(src, codes, scales)

			out, err := Transcode(dst, src, data, rowLen)
			if err != nil {
				t.Errorf("%s → %s: %v", src, dst, err)
				continue
			}
			if want := rowLen * rows / dst.BlockElems * dst.BlockBytes; len(out) != want {
				t.Errorf("%s → %s: %d bytes, want %d", src, dst, len(out), want)
				continue
			}
			if !bytes.Equal(out, pack(dst, codes, scales)) {
				t.Errorf("%s → %s: bytes differ from packing the codes directly", src, dst)
			}
			a, b := decodeBits(t, src, data), decodeBits(t, dst, out)
			for i := range a {
				if a[i] != b[i] {
					t.Errorf("%s → %s: element %d decodes to %#x, want %#x", src, dst, i, b[i], a[i])
					break
				}
			}
			back, err := Transcode(src, dst, out, rowLen)
			if err != nil {
				t.Errorf("%s → %s → %s: %v", src, dst, src, err)
				continue
			}
			if !bytes.Equal(back, data) {
				t.Errorf("%s → %s → %s: bytes differ", src, dst, src)
			}
		}
	}
}

func TestTranscodeErrors(t *testing.T) {
	one := func(f *Format, codes []uint8, d uint16) []byte {
		b := make([]byte, f.BlockBytes)
		f.tern.pack(b, codes, d)
		return b
	}
	ones := func(n int) []uint8 { return bytes.Repeat([]uint8{1}, n) }
	with := func(c []uint8, i int, v uint8) []uint8 { c[i] = v; return c }
	twos := func(n int) []uint8 { return bytes.Repeat([]uint8{2}, n) }

	tests := []struct {
		name     string
		dst, src *Format
		data     []byte
		rowLen   int
		err      error
		block    int
	}{
		{"g128 scales differ in a 256 block", TQ2_0, Q2_0,
			append(one(Q2_0, ones(128), 0x3c00), one(Q2_0, ones(128), 0x3c01)...), 256, ErrLossy, 1},
		{"g64 pair scales differ", Q2_0, Q2_0g64,
			append(append(append(one(Q2_0g64, ones(64), 1), one(Q2_0g64, ones(64), 1)...),
				one(Q2_0g64, ones(64), 2)...), one(Q2_0g64, ones(64), 3)...), 128, ErrLossy, 3},
		{"g128 to TQ1_0 scales differ", TQ1_0, PQ2_0,
			append(one(PQ2_0, ones(128), 0), one(PQ2_0, ones(128), 0x8000)...), 256, ErrLossy, 1},
		{"code 3 to TQ1_0", TQ1_0, TQ2_0, one(TQ2_0, with(ones(256), 255, 3), 0x3c00), 256, ErrLossy, 0},
		{"code 3 to PTQ1_0", PTQ1_0, Q2_0g64,
			append(one(Q2_0g64, ones(64), 5), one(Q2_0g64, with(ones(64), 7, 3), 5)...), 128, ErrLossy, 1},
		{"code 3 to Q1_0", Q1_0, PQ2_0, one(PQ2_0, with(twos(128), 0, 3), 5), 128, ErrLossy, 0},
		{"zero to Q1_0", Q1_0, TQ1_0, one(TQ1_0, with(twos(256), 200, 1), 5), 256, ErrLossy, 0},
		{"zero to Q1_0 from PTQ1_0", Q1_0, PTQ1_0,
			append(one(PTQ1_0, twos(128), 5), one(PTQ1_0, with(twos(128), 127, 1), 5)...), 128, ErrLossy, 1},
		{"row not a multiple of the target block", TQ2_0, Q2_0, one(Q2_0, ones(128), 0), 128, ErrSize, -1},
		{"row not a multiple of the source block", Q2_0g64, TQ2_0, one(TQ2_0, ones(256), 0), 64, ErrSize, -1},
		{"zero row length", Q2_0, PQ2_0, nil, 0, ErrSize, -1},
		{"negative row length", Q2_0, PQ2_0, nil, -128, ErrSize, -1},
		{"partial row", Q2_0, PQ2_0, make([]byte, 34*3), 256, ErrSize, -1},
		{"partial block", Q2_0, PQ2_0, make([]byte, 35), 128, ErrSize, -1},
		{"not ternary source", Q2_0, Q8_0, make([]byte, 34), 32, ErrNotTernary, -1},
		{"not ternary target", F16, Q2_0, make([]byte, 34), 128, ErrNotTernary, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Transcode(tt.dst, tt.src, tt.data, tt.rowLen)
			if !errors.Is(err, tt.err) || out != nil {
				t.Fatalf("Transcode = %d bytes, %v; want %v", len(out), err, tt.err)
			}
			var te *TranscodeError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TranscodeError", err)
			}
			if te.Block != tt.block || te.From != tt.src.Name || te.To != tt.dst.Name || te.Reason == "" {
				t.Errorf("error = %+v, want block %d", te, tt.block)
			}
		})
	}
}

// The 2-bit layouts carry code 3 (+2d) among themselves.
func TestTranscodeCode3(t *testing.T) {
	codes := make([]uint8, 256)
	for i := range codes {
		codes[i] = uint8(i % 4)
	}
	data := pack(Q2_0g64, codes, []uint16{0x3c00})
	for _, dst := range []*Format{Q2_0, PQ2_0, TQ2_0} {
		out, err := Transcode(dst, Q2_0g64, data, 256)
		if err != nil {
			t.Fatalf("→ %s: %v", dst, err)
		}
		x := make([]float32, 256)
		if err := dst.Decode(x, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			if want := float32(i%4) - 1; v != want {
				t.Fatalf("→ %s: element %d = %g, want %g", dst, i, v, want)
			}
		}
	}
}

func TestLCM(t *testing.T) {
	for _, c := range [][3]int{{64, 128, 128}, {128, 256, 256}, {256, 64, 256}, {128, 128, 128}, {1, 256, 256}} {
		if got := lcm(c[0], c[1]); got != c[2] {
			t.Errorf("lcm(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
