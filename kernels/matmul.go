package kernels

import "fmt"

// MatMul computes dst[i*w.Rows+r] = Σ_k W[r,k]·x[i*w.Cols+k] for i < n;
// n == 1 is a matrix-vector product (decode). Quantized formats quantize x
// internally into a scratch Acts owned by the pool; float formats use x as is.
func (p *Pool) MatMul(dst []float32, w *Matrix, x []float32, n int) {
	tr := p.traits(w)
	if len(x) < n*w.Cols {
		panic(fmt.Sprintf("kernels: MatMul: x has %d values, need %d×%d", len(x), n, w.Cols))
	}
	if tr.float {
		a := Acts{n: n, cols: w.Cols, x: x[:n*w.Cols]}
		p.MatMulActs(dst, w, &a)
		return
	}
	p.Quantize(&p.scratch, x, n, w.Cols)
	p.MatMulActs(dst, w, &p.scratch)
}

// traits returns the traits of w's format at the tier in use.
func (p *Pool) traits(w *Matrix) *traits {
	tr := traitsFor(w.Format, tier)
	if tr == nil {
		panic(fmt.Sprintf("kernels: no kernel for %v", w.Format))
	}
	return tr
}

// fewRows is the most activation rows that take the few-row path where
// the tier has a GEMM: up to it, the GEMM's unpacking costs more than the
// row kernels spend on each row.
const fewRows = 16

// SetBatchInvariant makes every product of p compute each activation row
// exactly as a product of that row alone would, bit for bit, whatever the
// number of rows: the few-row path serves every n. Without it, products of
// more than 16 rows in the ternary and binary formats at the AVX-512 tier
// run the GEMM, whose float association differs (each row's result is then
// the same in every product of more than 16 rows, but not the same as the
// row alone). Every other format and tier is batch-invariant either way.
// It must not be called while a product runs.
func (p *Pool) SetBatchInvariant(on bool) { p.invariant = on }

// Tile sizes of the few-row path: a worker takes a tile of weight rows of
// about tileBytes, which stays in L2 while up to actTileBytes of
// activation rows pass over it (four at a time, in L1, with rows4), so the
// weights are read from memory once per product however many rows there
// are. 256 KiB measured at least as fast as 32 and 128 KiB for 4 to 16
// rows (TQ2_0 2048×6144, Q2_0 4096×12288).
const (
	tileBytes    = 256 << 10
	actTileBytes = 512 << 10
)

// MatMulActs is MatMul with activations quantized beforehand by Quantize.
func (p *Pool) MatMulActs(dst []float32, w *Matrix, a *Acts) {
	tr := p.traits(w)
	if a.cols != w.Cols {
		panic(fmt.Sprintf("kernels: activations have %d columns, matrix %d", a.cols, w.Cols))
	}
	w.check(dst, a.n)
	n, rows := a.n, w.Rows
	if tr.gemm != nil && n > fewRows && !p.invariant {
		p.matMulGEMM(dst, w, a, tr.gemm)
		return
	}
	if tr.acts != nil {
		tr.acts(a, p)
	}
	if n == 1 {
		p.forGrain(rows, 8, func(lo, hi int) { tr.rows(dst[:rows], w, a, 0, lo, hi) })
		return
	}
	// An activation row takes about 3 bytes per value (int8, correction
	// and scale lanes).
	actTile := max(1, actTileBytes/(3*a.cols))
	tile := max(2, tileBytes/w.rowBytes()) &^ 1 // the row kernels take pairs
	tiles := (rows + tile - 1) / tile
	p.For(tiles, func(lo, hi int) {
		for i0 := 0; i0 < n; i0 += actTile {
			i1 := min(n, i0+actTile)
			for t := lo; t < hi; t++ {
				r0, r1 := t*tile, min(rows, (t+1)*tile)
				i := i0
				for ; i+4 <= i1; i += 4 {
					tr.rows4(dst, w, a, i, r0, r1)
				}
				for ; i < i1; i++ {
					tr.rows(dst[i*rows:(i+1)*rows], w, a, i, r0, r1)
				}
			}
		}
	})
}

// MatMulFloat is the reference path: every row is decoded exactly (the
// reference decoders) and multiplied with the float activations in float64.
// Tests and an exact mode of the model use it.
func (p *Pool) MatMulFloat(dst []float32, w *Matrix, x []float32, n int) {
	p.traits(w)
	if len(x) < n*w.Cols {
		panic(fmt.Sprintf("kernels: MatMulFloat: x has %d values, need %d×%d", len(x), n, w.Cols))
	}
	w.check(dst, n)
	p.forGrain(w.Rows, 4, func(lo, hi int) {
		buf := make([]float32, w.Cols)
		for r := lo; r < hi; r++ {
			decodeRow(w.Format, w.row(r), buf)
			for i := range n {
				xi := x[i*w.Cols : (i+1)*w.Cols]
				var s float64
				for j, v := range buf {
					s += float64(v) * float64(xi[j])
				}
				dst[i*w.Rows+r] = float32(s)
			}
		}
	})
}
