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
// rounds twice, through float64, where the assembly fuses once).
func gemmGo(c *gemmCall) {
	const lanes = gemmRows
	var out [gemmRowsPerCall][lanes]float32
	w := unsafe.Slice(c.w, c.nb*c.blocks*8*groupStride)
	ws := unsafe.Slice(c.ws, c.nb*lanes)
	for r := range gemmRowsPerCall {
		q := unsafe.Slice(c.q[r], c.nb*(32*c.blocks+c.gap))
		sz := func(k int) int32 { return *(*int32)(unsafe.Add(unsafe.Pointer(&q[k]), c.dsz)) }
		ds := func(k int) float32 { return *(*float32)(unsafe.Add(unsafe.Pointer(&q[k]), c.dds)) }
		k, g := 0, 0
		for b := range c.nb {
			var t [lanes]float32
			for blk := range c.blocks {
				var acc [lanes]int32
				for l := range acc {
					acc[l] = sz(k)
				}
				for j := range 8 {
					for l := range acc {
						for i := range 4 {
							acc[l] += int32(w[g*groupStride+4*l+i]) * int32(q[k+4*j+i])
						}
					}
					g++
				}
				d := ds(k)
				for l, v := range acc {
					if blk == 0 {
						t[l] = d * float32(v)
					} else {
						t[l] = fma32(d, float32(v), t[l])
					}
				}
				k += 32
			}
			k += c.gap
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
		if k := kernelsFor(quant.Q2_0).gemm[tierAVX512]; k != nil {
			ks["asm"] = k
		}
	}
	return ks
}

// randCall returns a kernel call over random codes and activations: nb
// weight blocks of the given activation blocks and gap, and random ds
// and ws in [−1, 1) (unit: all 1, which makes every output an exact
// integer).
func randCall(rng *rand.Rand, nb, blocks, gap int, unit bool) (*gemmCall, [gemmRowsPerCall][]float32) {
	scale := func() float32 {
		if unit {
			return 1
		}
		return rng.Float32()*2 - 1
	}
	codes := make([]byte, nb*blocks*8*groupStride)
	for i := range codes {
		codes[i] = byte(rng.IntN(4))
	}
	ws := make([]float32, nb*gemmRows)
	for i := range ws {
		ws[i] = scale()
	}
	const stride = 1 << 12 // a row of slots, longer than any test's
	q := make([]int8, gemmRowsPerCall*stride)
	sz := make([]int32, len(q)/4)
	ds := make([]float32, len(q)/4)
	for i := range q {
		q[i] = int8(rng.IntN(256) - 128)
	}
	for b := 0; b < len(q); b += 32 {
		var s int32
		for _, v := range q[b : b+32] {
			s += int32(v)
		}
		sz[b/4], ds[b/4] = -s, scale()
	}
	c := &gemmCall{
		w: &codes[0], ws: &ws[0], nb: nb, blocks: blocks, gap: gap,
		dsz:  uintptr(unsafe.Pointer(&sz[0])) - uintptr(unsafe.Pointer(&q[0])),
		dds:  uintptr(unsafe.Pointer(&ds[0])) - uintptr(unsafe.Pointer(&q[0])),
		mask: [2]uint16{0xffff, 0xffff},
	}
	var dst [gemmRowsPerCall][]float32
	for r := range gemmRowsPerCall {
		c.q[r] = &q[r*stride+rng.IntN(4)*32]
		dst[r] = make([]float32, gemmRows)
		c.dst[r] = &dst[r][0]
	}
	return c, dst
}

// TestGEMMKernel checks the micro-kernels against each other and against
// integer sums: with unit scales every output is an exact integer (below
// 2²⁴), which the kernels must hit exactly; with random scales the twin
// and the assembly differ only by the twin's double rounding, at most one
// float32 rounding of each of the ≤ 2·blocks·nb float operations per
// output: ≤ (2·blocks·nb + 2)·2⁻²⁴·S, S the sum of the magnitudes.
func TestGEMMKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ks := gemmKernels()
	for _, tt := range []struct{ nb, blocks, gap int }{{1, 1, 0}, {3, 4, 0}, {5, 2, 0}, {4, 8, 0}, {3, 5, 32}} {
		for _, unit := range []bool{true, false} {
			seed := rng.Uint64()
			var ref [gemmRowsPerCall][]float32
			for name, k := range ks {
				c, dst := randCall(rand.New(rand.NewPCG(seed, 1)), tt.nb, tt.blocks, tt.gap, unit)
				k(c)
				if ref[0] == nil {
					// Exact integers from the codes: the reference.
					ref = exactCall(c, tt.nb, tt.blocks, tt.gap)
				}
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
						want := ref[r][l]
						tol := 0.0
						if !unit {
							tol = float64(2*tt.blocks*tt.nb+2) * 0x1p-24 * magCall(c, r, l)
						}
						if math.Abs(float64(v)-float64(want)) > tol {
							t.Fatalf("%s %+v unit=%v: row %d lane %d = %g, want %g (±%g)", name, tt, unit, r, l, v, want, tol)
						}
					}
				}
			}
		}
	}
}

// callTerms returns the products of one output of c: for every weight
// block and activation block, the integer sum Σ(c−1)·q, the activation
// scale and the weight scale.
func callTerms(c *gemmCall, r, l int, fn func(sum int64, d, ws float32)) {
	w := unsafe.Slice(c.w, c.nb*c.blocks*8*groupStride)
	q := unsafe.Slice(c.q[r], c.nb*(32*c.blocks+c.gap))
	k, g := 0, 0
	for b := range c.nb {
		ws := *(*float32)(unsafe.Add(unsafe.Pointer(c.ws), 4*(b*gemmRows+l)))
		for range c.blocks {
			var s int64
			for j := range 32 {
				s += int64(int(w[(g+j/4)*groupStride+4*l+j%4])-1) * int64(q[k+j])
			}
			d := *(*float32)(unsafe.Add(unsafe.Pointer(&q[k]), c.dds))
			fn(s, d, ws)
			k += 32
			g += 8
		}
		k += c.gap
	}
}

// exactCall returns the outputs of c in float64, rounded to float32.
func exactCall(c *gemmCall, nb, blocks, gap int) (out [gemmRowsPerCall][]float32) {
	for r := range out {
		out[r] = make([]float32, gemmRows)
		for l := range out[r] {
			var sum float64
			callTerms(c, r, l, func(s int64, d, ws float32) { sum += float64(s) * float64(d) * float64(ws) })
			out[r][l] = float32(sum)
		}
	}
	return out
}

// magCall returns Σ|terms| of one output of c.
func magCall(c *gemmCall, r, l int) float64 {
	var mag float64
	callTerms(c, r, l, func(s int64, d, ws float32) { mag += math.Abs(float64(s) * float64(d) * float64(ws)) })
	return mag
}
