package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMulAdd checks MulAdd on every tier against a float64 product, over
// shapes around the four-row and 16- and 32-column tiles, with A read by
// rows and transposed, padded strides, and a nonzero C to accumulate into.
// Small-integer inputs make every rounding exact, so a kernel that drops
// or repeats a term cannot hide behind the bound.
func TestMulAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	forEachKernelSet(t, func(t *testing.T) {
		for _, m := range []int{0, 1, 3, 4, 5, 8, 11, 16} {
			for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 32, 33, 48, 70} {
				for _, k := range []int{0, 1, 2, 63, 128} {
					for _, trans := range []bool{false, true} {
						for _, small := range []bool{false, true} {
							checkMulAdd(t, r, m, n, k, trans, small)
						}
					}
				}
			}
		}
	})
}

func checkMulAdd(t *testing.T, r *rand.Rand, m, n, k int, trans, small bool) {
	t.Helper()
	val := func() float32 {
		if small {
			return float32(r.IntN(9) - 4)
		}
		return float32(r.NormFloat64())
	}
	ldc, ldb := n+3, n+5
	am, ak := k+2, 1
	if trans {
		am, ak = 1, m+1
	}
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = val()
		}
		return v
	}
	a, b, c := fill(max(m*am, k*ak)+2), fill(k*ldb), fill(m*ldc)
	want := make([]float64, len(c))
	bound := make([]float64, len(c))
	for i := range c {
		want[i] = float64(c[i])
		bound[i] = math.Abs(want[i])
	}
	for i := range m {
		for j := range n {
			for p := range k {
				x := float64(a[i*am+p*ak]) * float64(b[p*ldb+j])
				want[i*ldc+j] += x
				bound[i*ldc+j] += math.Abs(x)
			}
		}
	}
	got := append([]float32(nil), c...)
	MulAdd(got, ldc, a, am, ak, b, ldb, m, n, k)
	for i := range c {
		in := i/ldc < m && i%ldc < n
		if !in {
			if got[i] != c[i] {
				t.Fatalf("m=%d n=%d k=%d trans=%v: element %d outside C changed", m, n, k, trans, i)
			}
			continue
		}
		tol := float64(k+1) * u32 * bound[i]
		if small {
			tol = 0
		}
		if d := math.Abs(float64(got[i]) - want[i]); d > tol {
			t.Fatalf("m=%d n=%d k=%d trans=%v small=%v: C[%d][%d] = %v, want %v",
				m, n, k, trans, small, i/ldc, i%ldc, got[i], want[i])
		}
	}
}

func TestMulAddPanics(t *testing.T) {
	for _, f := range []func(){
		func() { MulAdd(make([]float32, 15), 4, make([]float32, 16), 4, 1, make([]float32, 16), 4, 4, 4, 4) },
		func() { MulAdd(make([]float32, 16), 4, make([]float32, 15), 4, 1, make([]float32, 16), 4, 4, 4, 4) },
		func() { MulAdd(make([]float32, 16), 4, make([]float32, 16), 4, 1, make([]float32, 15), 4, 4, 4, 4) },
		func() { MulAdd(nil, -1, nil, 0, 0, nil, 0, 1, 1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("MulAdd accepted a short slice or a negative stride")
				}
			}()
			f()
		}()
	}
}

func TestExpSub(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range testLengths {
			x := randVec(r, n)
			for i := range x {
				x[i] *= 20
			}
			if n > 3 {
				x[3] = float32(math.Inf(-1))
			}
			const m = 30
			want := make([]float64, n)
			var wantSum float64
			for i, v := range x {
				// The difference is rounded to float32 first, as ExpSub does.
				want[i] = math.Exp(float64(v - m))
				wantSum += want[i]
			}
			sum := ExpSub(x, m)
			for i := range x {
				if d := math.Abs(float64(x[i]) - want[i]); d > 4*u32*want[i]+1e-37 {
					t.Fatalf("n=%d: e^(x[%d]−m) = %v, want %v", n, i, x[i], want[i])
				}
			}
			if math.Abs(sum-wantSum) > 4*u32*wantSum {
				t.Fatalf("n=%d: sum %v, want %v", n, sum, wantSum)
			}
		}
	})
}

// BenchmarkMulAdd times the two products of one attention key block of 64
// keys against 32 query rows of head dimension 128: the scores (A = keys,
// B = the queries transposed) and the weighted values (A = the weights,
// B = the values). It reports GFLOP/s as the custom metric.
func BenchmarkMulAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, s := range []struct {
		name             string
		m, n, k, am, ldb int
	}{
		{"scores", 64, 32, 128, 128, 32},
		{"values", 32, 128, 64, 64, 128},
	} {
		a, bm, c := randVec(r, s.m*s.am), randVec(r, s.k*s.ldb), make([]float32, s.m*s.n)
		b.Run(s.name, func(b *testing.B) {
			forEachKernelSetB(b, func(b *testing.B) {
				for b.Loop() {
					MulAdd(c, s.n, a, s.am, 1, bm, s.ldb, s.m, s.n, s.k)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// TestMulAddTile checks that the tile shape MulAddTile reports covers every
// tile of the active tier, so padding to it keeps MulAdd in the tiles.
func TestMulAddTile(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		rows, cols := MulAddTile()
		tiles := mulAddTiles()
		if len(tiles) == 0 {
			if rows != 1 || cols != 1 {
				t.Errorf("MulAddTile() = %d, %d without tiles, want 1, 1", rows, cols)
			}
			return
		}
		if rows != 4 {
			t.Errorf("MulAddTile() rows = %d, want the tiles' 4", rows)
		}
		for _, tl := range tiles {
			if tl.cols%cols != 0 {
				t.Errorf("a %d-column tile is no multiple of MulAddTile's %d columns", tl.cols, cols)
			}
		}
	})
}
