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

// TestPairLayout checks PTQ1_0's pair layout against its slot layout: the
// same value and scale for every element, 256·Σq of each lane group in its
// lane, zeros everywhere else (the scale bytes, qh's fifth level, the empty
// lanes and the empty half of a last odd pair).
func TestPairLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	p := NewPool(2)
	defer p.Close()
	l := layoutPTQ1_0
	for _, nb := range []int{1, 2, 3, 6} {
		const n = 3
		cols := nb * l.be
		var a Acts
		// Fill the buffers with garbage first: the layout must not
		// depend on what a previous Quantize left there.
		p.Quantize(&a, randActs(n, 8*l.be, rng), n, 8*l.be)
		tr := a.prepareTrit(p, 0)
		for i := range tr.pq {
			tr.pq[i], tr.pc[i/20], tr.pds[i/20] = 99, 99, 99
		}
		p.Quantize(&a, randActs(n, cols, rng), n, cols)
		tr = a.prepareTrit(p, 0)
		pairs := (nb + 1) / 2
		for i := range n {
			seen := make([]bool, pairs*pairSlots)
			for b := range nb {
				base := i*tr.stride + b*len(l.slots)
				pq := tr.pq[i*tr.pstride+b/2*pairSlots:][:pairSlots]
				lanes := (i*pairs + b/2) * pairLanes
				var sums [ptq1Groups]int32
				for s, e := range l.slots {
					if e < 0 {
						continue
					}
					lvl, m := s/l.lanes, s%l.lanes
					pos := 64*lvl + 28*(b%2) + m
					lane := 7*(b%2) + m/4
					seen[b/2*pairSlots+pos] = true
					if pq[pos] != tr.q[base+s] || tr.pds[lanes+lane] != tr.ds[(base+s)/4] {
						t.Fatalf("%d blocks, row %d block %d slot %d: pair %d×%g, slots %d×%g",
							nb, i, b, s, pq[pos], tr.pds[lanes+lane], tr.q[base+s], tr.ds[(base+s)/4])
					}
					sums[m/4] += int32(pq[pos])
				}
				for j, s := range sums {
					if got := tr.pc[lanes+7*(b%2)+j]; got != 256*s {
						t.Fatalf("%d blocks, row %d block %d lane %d: correction %d, want %d", nb, i, b, j, got, 256*s)
					}
				}
			}
			for k, ok := range seen {
				if v := tr.pq[i*tr.pstride+k]; !ok && v != 0 {
					t.Fatalf("%d blocks, row %d: empty pair slot %d holds %d", nb, i, k, v)
				}
			}
			for k := range pairs * pairLanes {
				lane := k % pairLanes
				if lane < 14 && (lane < 7 || 2*(k/pairLanes)+1 < nb) {
					continue
				}
				if c, d := tr.pc[i*pairs*pairLanes+k], tr.pds[i*pairs*pairLanes+k]; c != 0 || d != 0 {
					t.Fatalf("%d blocks, row %d: empty lane %d holds %d, %g", nb, i, k, c, d)
				}
			}
		}
	}
}
