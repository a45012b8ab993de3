//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// TestTritRows checks the row-looping trit kernels against one single-row
// call per row, bit for bit, for every row count up to 9 and every block
// count up to 11: every way the loops split a row (three blocks or pairs
// of blocks at a time, one or two more, an odd last PTQ1_0 block), some
// of which TestRowsKernels's row lengths leave out.
func TestTritRows(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Skip("no AVX-512 on this CPU")
	}
	restore, err := useTier("avx512")
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	rng := rand.New(rand.NewPCG(15, 16))
	p := NewPool(1)
	defer p.Close()
	for _, f := range []*quant.Format{quant.PTQ1_0, quant.TQ1_0} {
		rk := rowsKernels[f]
		dot, _ := kernelsFor(f).pick(tierAVX512)
		for nb := 1; nb <= 11; nb++ {
			cols := nb * f.BlockElems
			w := randMatrix(t, f, 9, cols, rng)
			var a Acts
			p.Quantize(&a, randActs(1, cols, rng), 1, cols)
			dst := make([]float32, w.Rows)
			p.MatMulActs(dst, w, &a) // builds the layouts
			for nr := 1; nr <= w.Rows; nr++ {
				lo := w.Rows - nr
				clear(dst)
				rk(dst, w, &a, lo, w.Rows)
				for r := range w.Rows {
					want := float32(0)
					if r >= lo {
						want = dot(w.row(r), &a, 0)
					}
					if math.Float32bits(dst[r]) != math.Float32bits(want) {
						t.Fatalf("%s %d blocks rows [%d,%d) row %d: got %g, want %g", f, nb, lo, w.Rows, r, dst[r], want)
					}
				}
			}
		}
	}
}
