package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// TestBatchInvariance checks, for every format and tier, that a row's
// product does not depend on the batch: computed alone (matvec), among 2
// to 16 rows (the few-row path) or among more (the GEMM or the same tiles),
// at any position in the batch and with one thread or two, its bits are
// those of the row alone — always in a batch-invariant pool, and up to
// fewRows rows otherwise. Past fewRows, a pool that may run the GEMM gives
// each row the same bits in every batch of more than fewRows rows.
func TestBatchInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	counts := []int{1, 2, 5, 16, 17, 64, 512}
	const maxN = 512 // batches start at row 0 or 3 (512: at 0)
	shapes := []struct{ rows, cols int }{{37, 512}, {9, 1152}, {9, 320}}
	pools := map[string]*Pool{"t1": NewPool(1), "t2": NewPool(2), "inv-t2": NewPool(2)}
	pools["inv-t2"].SetBatchInvariant(true)
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, name := range tiers() {
		restore, err := useTier(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range quant.All {
			for _, sh := range shapes {
				if sh.cols%f.BlockElems != 0 {
					continue
				}
				w := randMatrix(t, f, sh.rows, sh.cols, rng)
				x := randActs(maxN, sh.cols, rng)
				t.Run(fmt.Sprintf("%s/%s/%dx%d", name, f.Name, sh.rows, sh.cols), func(t *testing.T) {
					testBatchInvariance(t, pools, w, x, counts)
				})
			}
		}
		restore()
	}
}

// testBatchInvariance is TestBatchInvariance for one matrix, with maxN
// activation rows in x.
func testBatchInvariance(t *testing.T, pools map[string]*Pool, w *Matrix, x []float32, counts []int) {
	cols, rows := w.Cols, w.Rows
	maxN := len(x) / cols
	alone := make([]float32, maxN*rows)
	for i := range maxN {
		pools["t1"].MatMul(alone[i*rows:(i+1)*rows], w, x[i*cols:(i+1)*cols], 1)
	}
	// big holds, per pool, the product of all maxN rows in one batch.
	big := map[string][]float32{}
	for name, p := range pools {
		big[name] = make([]float32, maxN*rows)
		p.MatMul(big[name], w, x, maxN)
	}
	for _, n := range counts {
		for _, i0 := range []int{0, 3} {
			if i0+n > maxN {
				continue
			}
			for name, p := range pools {
				dst := make([]float32, n*rows)
				p.MatMul(dst, w, x[i0*cols:(i0+n)*cols], n)
				want, what := alone[i0*rows:], "alone"
				if n > fewRows && !p.invariant {
					want, what = big[name][i0*rows:], "in one batch of all"
				}
				for k, v := range dst {
					if math.Float32bits(v) != math.Float32bits(want[k]) {
						t.Fatalf("pool %s, %d rows from %d: row %d output %d = %g, %s %g", name, n, i0, i0+k/rows, k%rows, v, what, want[k])
					}
				}
			}
		}
	}
	// One thread and two give the same bits; the invariant pool's batch of
	// all is every row alone.
	for k, v := range big["inv-t2"] {
		if math.Float32bits(v) != math.Float32bits(alone[k]) {
			t.Fatalf("invariant pool, one batch of all: output %d = %g, alone %g", k, v, alone[k])
		}
	}
	{
		a, b := big["t1"], big["t2"]
		for k := range a {
			if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
				t.Fatalf("large batch: output %d with 1 thread %g, with 2 %g", k, a[k], b[k])
			}
		}
	}
}
