package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"trit/quant"
)

// TestQuantizeQ8_0SIMD checks the AVX-512 quantizer against quantizeBlock
// bit for bit: random blocks over a wide range of scales, zero blocks,
// ties (x·(1/d) exactly halfway between integers) and fp16-subnormal
// scales.
func TestQuantizeQ8_0SIMD(t *testing.T) {
	if quantQ8_0SIMD == nil {
		t.Skip("no SIMD quantizer in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var x []float32
	for _, scale := range []float64{1e-30, 1e-7, 1e-3, 1, 1e3, 1e30} {
		for range 16 {
			for range qk {
				x = append(x, float32(rng.NormFloat64()*scale))
			}
		}
	}
	x = append(x, make([]float32, qk)...) // all zeros
	// Ties: amax 127 gives d = 1, so halves stay halves.
	tie := []float32{127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, 0.49999997, -0.50000006}
	x = append(x, append(tie, make([]float32, qk-len(tie))...)...)
	// A negative maximum, a lone nonzero value and negative zeros.
	neg := make([]float32, qk)
	neg[3], neg[7] = -3, float32(math.Copysign(0, -1))
	x = append(x, neg...)
	lone := make([]float32, qk)
	lone[31] = 1e-3
	x = append(x, lone...)
	nb := len(x) / qk
	for _, n := range []int{1, 3, nb} {
		q0, q1 := make([]int8, n*qk), make([]int8, n*qk)
		d0, d1 := make([]float32, n), make([]float32, n)
		s0, s1 := make([]int32, n), make([]int32, n)
		xs := x[len(x)-n*qk:]
		for b := range n {
			d0[b], s0[b] = quantizeBlock(q0[b*qk:(b+1)*qk], xs[b*qk:(b+1)*qk])
		}
		quantQ8_0SIMD(q1, d1, s1, xs)
		for b := range n {
			if math.Float32bits(d0[b]) != math.Float32bits(d1[b]) || s0[b] != s1[b] || !slices.Equal(q0[b*qk:(b+1)*qk], q1[b*qk:(b+1)*qk]) {
				t.Fatalf("n=%d block %d: SIMD d=%g s=%d q=%v, Go d=%g s=%d q=%v", n, b, d1[b], s1[b], q1[b*qk:(b+1)*qk], d0[b], s0[b], q0[b*qk:(b+1)*qk])
			}
		}
	}
}

// TestPlanesSIMD checks the AVX-512 plane builders against their Go twins
// for every chunk width the layouts use.
func TestPlanesSIMD(t *testing.T) {
	if planeQ2SIMD == nil || planeQ1SIMD == nil {
		t.Skip("no SIMD plane builders in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]int8, 512)
	for i := range src {
		src[i] = int8(rng.Uint32())
	}
	for _, e := range []int{64, 128, 192, 256} {
		want, got := make([]int8, e), make([]int8, e)
		planeQ2Go(want, src[:e])
		planeQ2SIMD(got, src[:e])
		if !slices.Equal(got, want) {
			t.Fatalf("planeQ2, %d elements: got %v want %v", e, got, want)
		}
	}
	want, got := make([]int8, 512), make([]int8, 512)
	planeQ1Go(want, src)
	planeQ1SIMD(got, src)
	if !slices.Equal(got, want) {
		t.Fatalf("planeQ1: got %v want %v", got, want)
	}
}

// TestQuantizeQ8_KSIMD checks the AVX-512 Q8_K quantizer against the Go
// path (quantizeBlockK and the per-32 sums) bit for bit: random blocks
// over a wide range of scales, a zero block, ties (round half to even),
// and equal magnitudes of opposite signs (the first one sets the sign).
func TestQuantizeQ8_KSIMD(t *testing.T) {
	if quantQ8_KSIMD == nil {
		t.Skip("no SIMD quantizer in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var x []float32
	for _, scale := range []float64{1e-30, 1e-3, 1, 1e3, 1e30} {
		for range 2 * qkK {
			x = append(x, float32(rng.NormFloat64()*scale))
		}
	}
	x = append(x, make([]float32, qkK)...)
	tie := make([]float32, qkK)
	copy(tie, []float32{0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5})
	tie[200] = -127 // iscale 1
	x = append(x, tie...)
	for _, pos := range [][2]int{{5, 9}, {250, 17}} {
		b := make([]float32, qkK)
		b[pos[0]], b[pos[1]] = -3, 3
		b[100] = 1
		x = append(x, b...)
	}
	nb := len(x) / qkK
	const per = qkK / qk
	for _, n := range []int{1, nb} {
		xs := x[len(x)-n*qkK:]
		q0, q1 := make([]int8, n*qkK), make([]int8, n*qkK)
		d0, d1 := make([]float32, n*per), make([]float32, n*per)
		s0, s1 := make([]int32, n*per), make([]int32, n*per)
		for b := range n {
			qb := q0[b*qkK : (b+1)*qkK]
			d := quantizeBlockK(qb, xs[b*qkK:(b+1)*qkK])
			for j := range per {
				var s int32
				for _, v := range qb[j*qk : (j+1)*qk] {
					s += int32(v)
				}
				d0[b*per+j], s0[b*per+j] = d, s
			}
		}
		quantQ8_KSIMD(q1, d1, s1, xs)
		for b := range n * per {
			if math.Float32bits(d0[b]) != math.Float32bits(d1[b]) || s0[b] != s1[b] || !slices.Equal(q0[b*qk:(b+1)*qk], q1[b*qk:(b+1)*qk]) {
				t.Fatalf("n=%d 32-block %d: SIMD d=%g s=%d q=%v, Go d=%g s=%d q=%v", n, b, d1[b], s1[b], q1[b*qk:(b+1)*qk], d0[b], s0[b], q0[b*qk:(b+1)*qk])
			}
		}
	}
}

// TestRowsKernels checks every tier's rowsFn and rows4Fn (the assembly
// ones take weight rows in
// pairs, i with i+nr/2, and an odd last row) against one single-row call
// per row, bit for bit, for every row count up to 9, every block count up
// to 11 (every way the loops split a row) and longer rows with and without
// the tails that the plane layouts leave to other kernels; rows outside
// the range must stay untouched.
func TestRowsKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := NewPool(1)
	defer p.Close()
	for _, name := range tiers() {
		restore, err := useTier(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range quant.All {
			testRowsKernel(t, p, f, rng)
		}
		restore()
	}
}

// testRowsKernel is TestRowsKernels for one format at the tier in use.
func testRowsKernel(t *testing.T, p *Pool, f *quant.Format, rng *rand.Rand) {
	const untouched = -7.5
	tr := traitsFor(f, tier)
	rk, dot := tr.rows, tr.dot
	var lengths []int
	for nb := 1; nb <= 11; nb++ {
		lengths = append(lengths, nb*f.BlockElems)
	}
	for _, cols := range []int{1280, 2560} {
		if cols%f.BlockElems == 0 {
			lengths = append(lengths, cols)
		}
	}
	for _, cols := range lengths {
		w := randMatrix(t, f, 9, cols, rng)
		// Six activation rows: the kernels take row i's layout (rows
		// 1 and 1..4 here), and rows4 must leave rows 0 and 5 alone.
		const n = 6
		var a Acts
		p.Quantize(&a, randActs(n, cols, rng), n, cols)
		if tr.acts != nil {
			tr.acts(&a, p)
		}
		dst := make([]float32, n*w.Rows)
		for nr := 1; nr <= w.Rows; nr++ {
			for lo := 0; lo+nr <= w.Rows; lo += nr {
				for four := range 2 {
					for r := range dst {
						dst[r] = untouched
					}
					if four == 1 {
						tr.rows4(dst, w, &a, 1, lo, lo+nr)
					} else {
						rk(dst[w.Rows:2*w.Rows], w, &a, 1, lo, lo+nr)
					}
					for k := range dst {
						i, r := k/w.Rows, k%w.Rows
						want := float32(untouched)
						if r >= lo && r < lo+nr && (i == 1 || four == 1 && i >= 1 && i <= 4) {
							want = dot(w.row(r), &a, i)
						}
						if math.Float32bits(dst[k]) != math.Float32bits(want) {
							t.Fatalf("%s tier %s cols %d rows [%d,%d) rows4 %v: act row %d row %d: got %g, want %g", f, Tier(), cols, lo, lo+nr, four == 1, i, r, dst[k], want)
						}
					}
				}
			}
		}
	}
}
