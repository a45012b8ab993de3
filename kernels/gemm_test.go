package kernels

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"trit/quant"
)

// gemmGo is the pure-Go twin of the assembly micro-kernel: the same
// integer sums and the same float operations in the same order (fma32
// rounds twice, through float64, where the assembly rounds once).
func gemmGo(c *gemmCall) {
	const lanes = gemmRows
	span := 32 * c.runs
	var out [gemmRowsPerCall][lanes]float32
	w := unsafe.Slice(c.w, c.nb*c.blocks*c.runs*8*groupStride)
	ws := unsafe.Slice(c.ws, c.nb*lanes)
	for r := range gemmRowsPerCall {
		q := unsafe.Slice(c.q[r], c.nb*span*c.blocks)
		sd := unsafe.Slice(c.sd[r], c.nb*c.blocks)
		k, g := 0, 0
		for b := range c.nb {
			var t [lanes]float32
			for blk := range c.blocks {
				var acc [lanes]int32
				for l := range acc {
					acc[l] = sd[b*c.blocks+blk].negSum
				}
				for range c.runs {
					for j := range 8 {
						for l := range acc {
							for i := range 4 {
								acc[l] += int32(w[g*groupStride+4*l+i]) * int32(q[k+4*j+i])
							}
						}
						g++
					}
					k += 32
				}
				d := sd[b*c.blocks+blk].d
				for l, v := range acc {
					if blk == 0 {
						t[l] = d * float32(v)
					} else {
						t[l] = fma32(d, float32(v), t[l])
					}
				}
			}
			for l := range t {
				out[r][l] = fma32(t[l], ws[b*lanes+l], out[r][l])
			}
		}
	}
	mask := uint32(c.mask[0]) | uint32(c.mask[1])<<16
	for r := range gemmRowsPerCall {
		dst := unsafe.Slice(c.dst[r], bits.Len32(mask)) // only the stored lanes exist
		for l, v := range out[r][:len(dst)] {
			if mask>>l&1 == 0 {
				continue
			}
			if c.add != 0 {
				v += dst[l]
			}
			dst[l] = v
		}
	}
}

func fma32(x, y, z float32) float32 {
	return float32(math.FMA(float64(x), float64(y), float64(z)))
}

// gemmKernels returns the micro-kernels to test: the Go twin and, where
// this machine runs it, the assembly.
func gemmKernels() map[string]gemmKernel {
	ks := map[string]gemmKernel{"go": gemmGo}
	if hwTier >= tierAVX512 {
		if g := traitsFor(quant.Q2_0, tierAVX512).gemm; g != nil {
			ks["asm"] = g.kern
		}
	}
	return ks
}

// gemmShape is the shape of one kernel call.
type gemmShape struct{ nb, blocks, runs int }

// randCall returns a kernel call of shape s over random codes (0..3) and
// activations, with random scales in [−1, 1) (unit: all 1, which makes
// every output an exact integer).
func randCall(rng *rand.Rand, s gemmShape, unit bool) (*gemmCall, [gemmRowsPerCall][]float32) {
	scale := func() float32 {
		if unit {
			return 1
		}
		return rng.Float32()*2 - 1
	}
	span := 32 * s.runs
	codes := make([]byte, s.nb*s.blocks*s.runs*8*groupStride)
	for i := range codes {
		codes[i] = byte(rng.IntN(4))
	}
	ws := make([]float32, s.nb*gemmRows)
	for i := range ws {
		ws[i] = scale()
	}
	c := &gemmCall{
		w: &codes[0], ws: &ws[0], nb: s.nb, blocks: s.blocks, runs: s.runs,
		mask: [2]uint16{0xffff, 0xffff},
	}
	var dst [gemmRowsPerCall][]float32
	for r := range gemmRowsPerCall {
		q := make([]int8, s.nb*s.blocks*span)
		for i := range q {
			q[i] = int8(rng.IntN(256) - 128)
		}
		sd := make([]gemmBlock, s.nb*s.blocks)
		for b := range sd {
			var sum int32
			for _, v := range q[b*span : (b+1)*span] {
				sum += int32(v)
			}
			sd[b] = gemmBlock{-sum, scale()}
		}
		c.q[r], c.sd[r] = &q[0], &sd[0]
		dst[r] = make([]float32, gemmRows)
		c.dst[r] = &dst[r][0]
	}
	return c, dst
}

// TestGEMMKernel checks the micro-kernels against exact sums: with unit
// scales every output is an integer below 2²⁴, which the kernels must hit
// exactly; with random scales each of the ≤ 2·blocks·nb float operations
// of an output rounds once (the twin's double rounding adds 2⁻⁵³ each),
// and the reference rounds once to float32: |got − exact| ≤
// (2·blocks·nb + 2)·2⁻²⁴·S, S the sum of the terms' magnitudes.
func TestGEMMKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	shapes := []gemmShape{{1, 1, 1}, {3, 4, 1}, {5, 2, 1}, {3, 1, 8}, {2, 2, 3}}
	for _, s := range shapes {
		ks := gemmKernels()
		for _, unit := range []bool{true, false} {
			seed := rng.Uint64()
			for name, k := range ks {
				c, dst := randCall(rand.New(rand.NewPCG(seed, 1)), s, unit)
				k(c)
				if unit {
					// Once more, adding, into the first 8 and the 17th lane.
					c.add, c.mask = 1, [2]uint16{0xff, 1}
					k(c)
					for r := range dst {
						for l := range dst[r] {
							if l < 8 || l == 16 {
								dst[r][l] /= 2
							}
						}
					}
				}
				for r := range dst {
					for l, v := range dst[r] {
						want, mag := exactCall(c, r, l)
						tol := 0.0
						if !unit {
							tol = float64(2*s.blocks*s.nb+2) * 0x1p-24 * mag
						}
						if math.Abs(float64(v)-float64(want)) > tol {
							t.Fatalf("%s %+v unit=%v: row %d lane %d = %g, want %g (±%g)", name, s, unit, r, l, v, want, tol)
						}
					}
				}
			}
		}
	}
}

// exactCall returns output l of activation row r of c, computed from the
// codes as Σ (c−1)·q·d·ws in float64 and rounded to float32, and the sum
// of the terms' magnitudes.
func exactCall(c *gemmCall, r, l int) (float32, float64) {
	span := 32 * c.runs
	w := unsafe.Slice(c.w, c.nb*c.blocks*c.runs*8*groupStride)
	q := unsafe.Slice(c.q[r], c.nb*span*c.blocks)
	sd := unsafe.Slice(c.sd[r], c.nb*c.blocks)
	ws := unsafe.Slice(c.ws, c.nb*gemmRows)
	var sum, mag float64
	k := 0
	for b := range c.nb {
		for blk := range c.blocks {
			var s int64
			for j := range span {
				g := ((b*c.blocks+blk)*c.runs+j/32)*8 + j%32/4
				s += int64(int(w[g*groupStride+4*l+j%4])-1) * int64(q[k+j])
			}
			term := float64(s) * float64(sd[b*c.blocks+blk].d) * float64(ws[b*gemmRows+l])
			sum += term
			mag += math.Abs(term)
			k += span
		}
	}
	return float32(sum), mag
}

// TestGEMMUnpack checks the 16-row unpackers against the one-row ones:
// the same bytes and scales.
func TestGEMMUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	if hwTier < tierAVX512 {
		t.Skip("no 16-row unpackers in this build or on this CPU")
	}
	for _, f := range quant.All {
		g := traitsFor(f, tierAVX512).gemm
		if g == nil || g.unpack16 == nil {
			continue
		}
		const rows, nb = 16, 3
		w := randMatrix(t, f, rows, nb*f.BlockElems, rng)
		groups := g.slots / 4
		want := make([]byte, nb*groups*groupStride)
		got := make([]byte, len(want))
		wantWS, gotWS := make([]float32, nb*gemmRows), make([]float32, nb*gemmRows)
		for r := range rows {
			for b := range nb {
				blk := w.row(r)[b*f.BlockBytes : (b+1)*f.BlockBytes]
				wantWS[b*gemmRows+r] = g.unpack(want[b*groups*groupStride+4*r:], blk)
			}
		}
		g.unpack16(&got[0], &gotWS[0], &w.Data[0], w.rowBytes(), nb)
		for i := range want {
			if got[i] != want[i] {
				j := i % groupStride
				t.Fatalf("%s: group %d vector %d lane %d byte %d = %d, want %d", f, i/groupStride, j/64, j%64/4, j%4, got[i], want[i])
			}
		}
		for i := range wantWS {
			if gotWS[i] != wantWS[i] && i%gemmRows < rows {
				t.Fatalf("%s: scale %d = %g, want %g", f, i, gotWS[i], wantWS[i])
			}
		}
	}
}

// gemmFormatsGo lists the GEMM's formats, which every build has (the
// SIMD tiers add their unpackers and kernels).
var gemmFormatsGo = map[*quant.Format]*gemmFormat{
	quant.Q2_0: gemmQ2, quant.PQ2_0: gemmQ2, quant.Q2_0g64: gemmQ2g64, quant.Q1_0: gemmQ1,
	quant.TQ2_0: gemmTQ2, quant.TQ1_0: gemmTQ1, quant.PTQ1_0: gemmPTQ1,
}

// TestGEMMGo runs the GEMM with the Go twin (every build has it) on every
// format, with partial tiles, activation rows past a multiple of four and
// several K chunks, against the exact products within the TestTiers bound.
func TestGEMMGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	p := NewPool(2)
	defer p.Close()
	for f, g := range gemmFormatsGo {
		cols := 2 * gemmChunk / g.slots * f.BlockElems
		cols += f.BlockElems * 3 // a partial chunk
		const n = 6
		w := randMatrix(t, f, gemmRows+5, cols, rng)
		var a Acts
		p.Quantize(&a, randActs(n, cols, rng), n, cols)
		dst := make([]float32, n*w.Rows)
		gg := *g
		gg.kern = gemmGo
		p.matMulGEMM(dst, w, &a, &gg)
		for i := range n {
			for r := range w.Rows {
				ref, mag := exactRef(p, w, &a, i, r)
				if got := float64(dst[i*w.Rows+r]); math.Abs(got-ref) > bound(f, cols)*0x1p-23*mag {
					t.Fatalf("%s [%d,%d]: got %g want %g", f, i, r, got, ref)
				}
			}
		}
	}
}
