package kernels

import (
	"fmt"

	"trit/quant"
)

// MatMul computes dst[i*w.Rows+r] = Σ_k W[r,k]·x[i*w.Cols+k] for i < n;
// n == 1 is a matrix-vector product (decode). Quantized formats quantize x
// internally into a scratch Acts owned by the pool; float formats use x as is.
func (p *Pool) MatMul(dst []float32, w *Matrix, x []float32, n int) {
	k := kernelsFor(w.Format)
	if k == nil {
		panic(fmt.Sprintf("kernels: no kernel for %v", w.Format))
	}
	if len(x) < n*w.Cols {
		panic(fmt.Sprintf("kernels: MatMul: x has %d values, need %d×%d", len(x), n, w.Cols))
	}
	if k.float {
		a := Acts{n: n, cols: w.Cols, x: x[:n*w.Cols]}
		p.MatMulActs(dst, w, &a)
		return
	}
	p.Quantize(&p.scratch, x, n, w.Cols)
	p.MatMulActs(dst, w, &p.scratch)
}

// Tile sizes for n > 1 without a GEMM kernel: a worker takes rowTile
// weight rows and passes up to actTileBytes of activation rows over them,
// so both stay in L2 while every pair is formed.
const (
	rowTile      = 16
	actTileBytes = 512 << 10
)

// rowsFn computes the products of weight rows lo..hi-1 with activation
// row 0 into dst[lo:hi] in one call.
type rowsFn func(dst []float32, w *Matrix, a *Acts, lo, hi int)

// rowsKernels holds the AVX-512 decode kernels that loop over weight rows
// in assembly (cpu_amd64.go); elsewhere n == 1 calls dot once per row.
var rowsKernels map[*quant.Format]rowsFn

// MatMulActs is MatMul with activations quantized beforehand by Quantize.
func (p *Pool) MatMulActs(dst []float32, w *Matrix, a *Acts) {
	k := kernelsFor(w.Format)
	if k == nil {
		panic(fmt.Sprintf("kernels: no kernel for %v", w.Format))
	}
	if a.cols != w.Cols {
		panic(fmt.Sprintf("kernels: activations have %d columns, matrix %d", a.cols, w.Cols))
	}
	w.check(dst, a.n)
	dot, t := k.pick(tier)
	if kern := k.gemm[t]; kern != nil && a.n > 1 {
		p.matMulGEMM(dst, w, a, gemmFormats[w.Format], kern)
		return
	}
	simd := t > tierGeneric
	if !simd && k.swar != nil {
		p.matMulSwar(dst, w, a, k.swar, k.act)
		return
	}
	switch {
	case k.float:
	case simd && (w.Format == quant.PTQ1_0 || w.Format == quant.TQ1_0):
		a.prepareTrit(p, tritIndex(w.Format))
	case k.planes[t] != noPlanes:
		// The Q1_0 and Q2_0_g64 kernels read the SIMD layout for a row's
		// blocks past its last whole chunk (Q2_0's handle them).
		l := k.planes[t]
		a.preparePlanes(p, l)
		if a.cols%planeInfo[l].chunk != 0 && w.Format != quant.Q2_0 && w.Format != quant.PQ2_0 {
			a.prepareSIMD(p, k.act)
		}
	case simd:
		a.prepareSIMD(p, k.act)
	default:
		a.prepare(p, k.act)
	}
	n, rows := a.n, w.Rows
	if n == 1 {
		if rk := rowsKernels[w.Format]; rk != nil && t == tierAVX512 {
			p.forGrain(rows, 8, func(lo, hi int) { rk(dst, w, a, lo, hi) })
			return
		}
		p.forGrain(rows, 8, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				dst[r] = dot(w.row(r), a, 0)
			}
		})
		return
	}
	// An activation row takes about 3 bytes per value (int8, correction
	// and scale lanes).
	actTile := max(1, actTileBytes/(3*a.cols))
	tiles := (rows + rowTile - 1) / rowTile
	p.For(tiles, func(lo, hi int) {
		for i0 := 0; i0 < n; i0 += actTile {
			i1 := min(n, i0+actTile)
			for r := lo * rowTile; r < min(rows, hi*rowTile); r++ {
				row := w.row(r)
				for i := i0; i < i1; i++ {
					dst[i*rows+r] = dot(row, a, i)
				}
			}
		}
	})
}

// MatMulFloat is the reference path: every row is decoded exactly (the
// reference decoders) and multiplied with the float activations in float64.
// Tests and an exact mode of the model use it.
func (p *Pool) MatMulFloat(dst []float32, w *Matrix, x []float32, n int) {
	if kernelsFor(w.Format) == nil {
		panic(fmt.Sprintf("kernels: no kernel for %v", w.Format))
	}
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
