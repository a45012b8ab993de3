package kernels

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// TestTritIdentity checks the identity the AVX-512 trit kernels rest on,
// for every byte and level: with p_n = b·3ⁿ mod 256, 3·p_n − p_(n+1) is 256
// times trit n as the reference decoder reads it.
func TestTritIdentity(t *testing.T) {
	for b := range 256 {
		p := uint8(b)
		for n := range 5 {
			next := p + p + p
			tr := int(uint16(p)*3) >> 8
			if got := 3*int(p) - int(next); got != 256*tr {
				t.Fatalf("byte %d level %d: 3p−p' = %d, want 256·%d", b, n, got, tr)
			}
			p = next
		}
	}
}

// TestTritBytes runs every tier over rows whose code bytes all hold one
// value, for all 256 values, so every trit level of every byte value meets
// every byte position. Scales 1 and activations ±127 keep each product an
// exact integer, so the tiers must agree with the reference decoder
// exactly, for one row of activations and for five (the four-row
// kernels). The block counts cover the kernels' loops of two units with
// and without a last single unit, and a PTQ1_0 pair with an empty half.
func TestTritBytes(t *testing.T) {
	checkTritBytes(t, quant.PTQ1_0, 1, 2, 3, 4, 5, 6, 7)
	checkTritBytes(t, quant.TQ1_0, 1, 2, 3, 4)
}

// checkTritBytes is TestTritBytes for format f and rows of nbs blocks.
func checkTritBytes(t *testing.T, f *quant.Format, nbs ...int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(13, 14))
	p := NewPool(2)
	defer p.Close()
	for _, nb := range nbs {
		cols := nb * f.BlockElems
		x := make([]float32, 5*cols)
		for i := range x {
			x[i] = float32(127 * (2*rng.IntN(2) - 1))
		}
		data := make([]byte, 256*nb*f.BlockBytes)
		for r := range 256 {
			for b := range nb {
				blk := data[(r*nb+b)*f.BlockBytes:][:f.BlockBytes]
				for i := range blk {
					blk[i] = byte(r)
				}
				binary.LittleEndian.PutUint16(blk[scaleOffsets[f][0]:], 0x3c00)
			}
		}
		w, err := NewMatrix(f, 256, cols, data)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, 5*w.Rows)
		buf := make([]float32, cols)
		for r := range w.Rows {
			decodeRow(f, w.row(r), buf)
			for i := range 5 {
				var s float32
				for j, v := range buf {
					s += v * x[i*cols+j]
				}
				want[i*w.Rows+r] = s
			}
		}
		for _, name := range tiers() {
			restore, err := useTier(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 5} {
				got := make([]float32, n*w.Rows)
				p.MatMul(got, w, x, n)
				for i, v := range got {
					if v != want[i] {
						t.Fatalf("%s tier %s, %d blocks, n=%d, byte %d, row %d: got %g, want %g",
							f, name, nb, n, i%w.Rows, i/w.Rows, v, want[i])
					}
				}
			}
			restore()
		}
	}
}

// TestTritRandom runs TestTiers's check over longer rows of random blocks
// than TestTiers has: many iterations of the kernels' loops, and every way
// a row can end in them.
func TestTritRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	p := NewPool(2)
	defer p.Close()
	for _, nb := range []int{16, 17} {
		testTiers(t, p, quant.TQ1_0, nb*256, rng)
		testTiers(t, p, quant.PTQ1_0, 2*nb*128, rng)
		testTiers(t, p, quant.PTQ1_0, (2*nb+1)*128, rng)
	}
}

// TestPTQ1Layouts checks PTQ1_0's slot and pair layouts against the
// natural Q8_0 activations, with the element map of formats.md written
// out here: every element's value with its block's scale (in the pair
// layout, in a lane of the element's half whose scale in the element's
// level group, ptq1Perm's block, is the element's); per activation block,
// corrections adding up to −Σq (slot layout) and 256·Σq (pair layout,
// over the lanes of group 0 that take the block's scale); every lane
// scale of the pair layout that of its ptq1Perm block; zeros everywhere
// else (the padding slots, qh's fifth level, the lanes past 56 bytes and
// the empty half of a last odd pair, scales included).
func TestPTQ1Layouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	p := NewPool(2)
	defer p.Close()
	// element returns the element of byte m's trit n, or −1.
	element := func(m, n int) int {
		switch {
		case m < 16:
			return 16*n + m
		case m < 24:
			return 80 + 8*n + m - 16
		case m < 26 && n < 4:
			return 120 + 2*n + m - 24
		}
		return -1
	}
	group := [5]int{0, 0, 1, 1, 2} // the level groups of the pair layout
	for _, nb := range []int{1, 2, 3, 6} {
		const n = 3
		cols := nb * 128
		var a Acts
		// Fill the buffers with garbage first: the layouts must not
		// depend on what a previous Quantize left there.
		p.Quantize(&a, randActs(n, 8*128, rng), n, 8*128)
		tr := a.prepareTrit(p, layoutPTQ1_0)
		for _, s := range [][]int8{tr.q, tr.pq} {
			for i := range s {
				s[i] = 99
			}
		}
		for _, s := range [][]int32{tr.sz, tr.pc} {
			for i := range s {
				s[i] = 99
			}
		}
		for _, s := range [][]float32{tr.ds, tr.pds} {
			for i := range s {
				s[i] = 99
			}
		}
		p.Quantize(&a, randActs(n, cols, rng), n, cols)
		q8 := a.prepare(p, actQ8_0)
		tr = a.prepareTrit(p, layoutPTQ1_0)
		pairs := (nb + 1) / 2
		for i := range n {
			for b := range nb {
				k0 := (i*cols + b*128) / qk // the block's first activation block
				h := b % 2
				pair := i*pairs + b/2
				q := tr.q[i*tr.stride+b*192:][:192]
				sz := tr.sz[(i*tr.stride+b*192)/4:][:48]
				ds := tr.ds[(i*tr.stride+b*192)/4:][:48]
				pq := tr.pq[i*tr.pstride+b/2*pairSlots:][:pairSlots]
				pds := tr.pds[pair*pairScales:][:pairScales]
				var slotSum [4]int32
				for lvl := range 6 {
					for m := range 32 {
						e := -1
						if lvl < 5 {
							e = element(m, lvl)
						}
						s := 32*lvl + m
						lane := s / 4
						if e < 0 {
							if q[s] != 0 || (m < 28 && lvl < 5 && pq[64*lvl+28*h+m] != 0) {
								t.Fatalf("%d blocks, row %d block %d: padding slot %d holds %d, pair %d", nb, i, b, s, q[s], pq[64*lvl+28*h+m])
							}
							if m%4 == 0 && (sz[lane] != 0 || ds[lane] != 0) {
								t.Fatalf("%d blocks, row %d block %d: empty lane %d holds %d, %g", nb, i, b, lane, sz[lane], ds[lane])
							}
							continue
						}
						k := e / qk
						v, d := q8.q[k0*qk+e], q8.d[k0+k]
						if q[s] != v || ds[lane] != d {
							t.Fatalf("%d blocks, row %d block %d element %d: slot %d×%g, want %d×%g", nb, i, b, e, q[s], ds[lane], v, d)
						}
						g, l := group[lvl], 7*h+m/4
						ix := int(ptq1Perm[g][l]) // the lane's pair block, of its half
						if ix/4 != h || pq[64*lvl+28*h+m] != v || pds[g*pairLanes+l] != d {
							t.Fatalf("%d blocks, row %d block %d element %d: pair %d×%g (block %d), want %d×%g", nb, i, b, e, pq[64*lvl+28*h+m], pds[g*pairLanes+l], ix, v, d)
						}
						if m%4 == 0 {
							slotSum[k] += sz[lane]
						}
					}
				}
				for k := range 4 {
					if s := q8.s[k0+k]; slotSum[k] != -s {
						t.Fatalf("%d blocks, row %d block %d: activation block %d corrections %d, want %d", nb, i, b, k, slotSum[k], -s)
					}
				}
			}
			for pair := range pairs {
				pc := tr.pc[(i*pairs+pair)*pairLanes:][:pairLanes]
				pds := tr.pds[(i*pairs+pair)*pairScales:][:pairScales]
				pq := tr.pq[i*tr.pstride+pair*pairSlots:][:pairSlots]
				// scale returns pair block pb's scale, 0 past the row.
				scale := func(pb int) float32 {
					if b := 2*pair + pb/4; b < nb {
						return q8.d[(i*cols+b*128)/qk+pb%4]
					}
					return 0
				}
				var sums [pairBlocks]int32
				for l, v := range pc {
					sums[ptq1Perm[0][l]] += v
				}
				for pb, v := range sums {
					want := int32(0)
					if b := 2*pair + pb/4; b < nb {
						want = 256 * q8.s[(i*cols+b*128)/qk+pb%4]
					}
					if v != want {
						t.Fatalf("%d blocks, row %d pair %d: block %d: correction %d, want %d", nb, i, pair, pb, v, want)
					}
				}
				for g, perm := range ptq1Perm {
					for l, pb := range perm {
						if d := scale(int(pb)); pds[g*pairLanes+l] != d {
							t.Fatalf("%d blocks, row %d pair %d: group %d lane %d: scale %g, want %g", nb, i, pair, g, l, pds[g*pairLanes+l], d)
						}
					}
				}
				for lvl := range 5 {
					for m := range 64 {
						if (m >= 56 || 2*pair+m/28 >= nb) && pq[64*lvl+m] != 0 {
							t.Fatalf("%d blocks, row %d pair %d: empty slot %d holds %d", nb, i, pair, 64*lvl+m, pq[64*lvl+m])
						}
					}
				}
			}
		}
	}
}
