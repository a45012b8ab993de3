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

// Tile sizes for n > 1: a worker takes rowTile weight rows and passes up to
// actTileBytes of activation rows over them, so both stay in L2 while every
// pair is formed; the four-row kernels further split K into chunks so that
// their activations stay in L1 or near it (2048 measured 5–15 % faster than
// 1024 for every format at the 1.7B prefill shapes, 4096 slower again for
// the formats whose layout takes ≈ 5 bytes per activation).
const (
	rowTile      = 16
	actTileBytes = 512 << 10
	kChunk       = 2048 // activations per K chunk of the four-row kernels
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
	dot, dot4, t := k.pick(tier)
	simd := t > tierGeneric
	if !simd && k.lut != nil {
		p.matMulLUT(dst, w, a, k.lut, k.act)
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
	// A tile holds a multiple of 4 activation rows (the four-row kernels)
	// of about 3 bytes per value (int8, correction and scale lanes).
	actTile := max(4, actTileBytes/(3*a.cols)/4*4)
	tiles := (rows + rowTile - 1) / rowTile
	f := w.Format
	kc := max(f.BlockElems, kChunk/f.BlockElems*f.BlockElems)
	p.For(tiles, func(lo, hi int) {
		var out [4]float32
		for i0 := 0; i0 < n; i0 += actTile {
			i1 := min(n, i0+actTile)
			for r0 := lo * rowTile; r0 < min(rows, hi*rowTile); r0 += rowTile {
				r1 := min(rows, r0+rowTile)
				i := i0
				if dot4 != nil {
					// Four activation rows at a time, in K chunks that stay
					// in L1 while every row of the tile passes over them.
					for ; i+4 <= i1; i += 4 {
						for k0 := 0; k0 < w.Cols; k0 += kc {
							b0 := k0 / f.BlockElems * f.BlockBytes
							b1 := min(w.Cols, k0+kc) / f.BlockElems * f.BlockBytes
							for r := r0; r < r1; r++ {
								dot4(w.row(r)[b0:b1], a, i, k0, &out)
								if k0 == 0 {
									dst[i*rows+r] = out[0]
									dst[(i+1)*rows+r] = out[1]
									dst[(i+2)*rows+r] = out[2]
									dst[(i+3)*rows+r] = out[3]
								} else {
									dst[i*rows+r] += out[0]
									dst[(i+1)*rows+r] += out[1]
									dst[(i+2)*rows+r] += out[2]
									dst[(i+3)*rows+r] += out[3]
								}
							}
						}
					}
				}
				for r := r0; r < r1; r++ {
					row := w.row(r)
					for j := i; j < i1; j++ {
						dst[j*rows+r] = dot(row, a, j)
					}
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
