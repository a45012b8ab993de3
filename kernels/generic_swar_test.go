package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"trit/half"
	"trit/quant"
)

// TestSwarExact checks the lane arithmetic of every generic SWAR kernel
// exactly: with activation and weight scales of 1 a row product is the
// integer Σ W·q, exact in float32, so it must equal the naive sum over the
// decoded codes. The rows cover every byte value in every code position
// and the activations include the extremes that bound the lanes (±127 and
// −128, all of one sign or alternating).
func TestSwarExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	formats := []*quant.Format{quant.Q2_0, quant.PQ2_0, quant.Q2_0g64, quant.Q1_0, quant.TQ2_0, quant.TQ1_0, quant.PTQ1_0}
	for _, f := range formats {
		sk := swarFormats[f]
		cols := 7 * sk.be // Q2_0_g64 takes four blocks a step, then one at a time
		nb := cols / f.BlockElems
		scale := scaleOffsets[f][0]
		acts := map[string]func(j int) int8{
			"+127":      func(int) int8 { return 127 },
			"-127":      func(int) int8 { return -127 },
			"-128":      func(int) int8 { return -128 },
			"alternate": func(j int) int8 { return int8(127 - 254*(j%2)) },
			"random":    func(int) int8 { return int8(rng.IntN(256) - 128) },
		}
		for name, act := range acts {
			q := make([]int8, cols)
			for j := range q {
				q[j] = act(j)
			}
			d := make([]float32, cols/qk)
			s := make([]int32, cols/qk)
			for k := range s {
				d[k] = 1
				for _, v := range q[k*qk : (k+1)*qk] {
					s[k] += int32(v)
				}
			}
			x := make([]uint64, cols/sk.be*sk.words)
			sk.build(q, d, s, x)
			row := make([]byte, nb*f.BlockBytes)
			vals := make([]float32, cols)
			// Row v holds byte v everywhere, then rows of random bytes.
			for v := range 256 + 64 {
				for i := range row {
					row[i] = byte(v)
					if v >= 256 {
						row[i] = byte(rng.Uint32())
					}
				}
				for b := range nb {
					binary.LittleEndian.PutUint16(row[b*f.BlockBytes+scale:], 0x3c00) // 1.0
				}
				decodeRow(f, row, vals)
				var want float64
				for j, w := range vals {
					want += float64(w) * float64(q[j])
				}
				if got := sk.dot(row, x); float64(got) != want {
					t.Fatalf("%s, activations %s, row %d: got %g, want %g", f, name, v, got, want)
				}
			}
		}
	}
}

// TestScale16 compares scale16 with the reference conversion for every
// binary16 value (NaNs only by class: the multiply may quiet them).
func TestScale16(t *testing.T) {
	for h := range 1 << 16 {
		b := [2]byte{byte(h), byte(h >> 8)}
		got, want := scale16(&b), half.ToFloat32(uint16(h))
		if math.IsNaN(float64(want)) {
			if !math.IsNaN(float64(got)) {
				t.Fatalf("scale16(%#04x) = %g, want NaN", h, got)
			}
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("scale16(%#04x) = %g, want %g", h, got, want)
		}
	}
}
