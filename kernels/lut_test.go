package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// TestLUTTiles checks that the tiled walk of the generic tier (column tiles
// inside row tiles, with a partial last tile of each) gives exactly the bits
// of one untiled pass over each whole row.
func TestLUTTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := NewPool(1)
	defer p.Close()
	for _, f := range []*quant.Format{quant.Q2_0, quant.PQ2_0, quant.Q2_0g64, quant.TQ2_0, quant.TQ1_0, quant.Q1_0} {
		k := kernelsFor(f)
		lk := k.lut
		cols := 2*lk.chunk + 256 // two full column tiles and a partial one
		rows := lutRowTile + 5   // a full row tile and a partial one
		w := randMatrix(t, f, rows, cols, rng)
		var a Acts
		p.Quantize(&a, randActs(1, cols, rng), 1, cols)
		a.prepare(p, k.act)
		q, d, s := actRow(&a, k.act, 0)
		lut := make([]int16, cols/lk.elems*256)
		lk.build(q, lut)
		got := make([]float32, rows)
		for i := range got {
			got[i] = float32(math.NaN()) // rows must overwrite, not add to, dst
		}
		lk.rows(got, w, lut, d, s, 0, rows)
		for r := range rows {
			if want := lk.dot(w.row(r), lut, d, s, 0); math.Float32bits(got[r]) != math.Float32bits(want) {
				t.Fatalf("%s row %d: tiled %g, untiled %g", f, r, got[r], want)
			}
		}
	}
}
