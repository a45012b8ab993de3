package vision

import (
	"fmt"
	"math"

	"trit/ops"
)

// scratch is the activations of one Encode call.
type scratch struct {
	h, x, qkv, att, mid, kt, vp []float32
}

// Encode runs the tower on preprocessed pixels whose size is a multiple of
// MergedPatch on both sides.
func (t *Tower) Encode(px *Pixels) (*Embeddings, error) {
	W, H := px.Image.W, px.Image.H
	f := t.MergedPatch()
	if W <= 0 || H <= 0 || W%f != 0 || H%f != 0 || len(px.Norm) != 3*W*H {
		return nil, fmt.Errorf("vision: pixels of %d×%d (%d values) are not a multiple of %d", W, H, len(px.Norm), f)
	}
	pw, ph := W/t.patch, H/t.patch
	np := pw * ph
	C := t.hidden
	var s scratch
	s.h = make([]float32, np*C)
	s.x = make([]float32, np*C)
	s.qkv = make([]float32, np*3*C)
	s.att = make([]float32, np*C)
	s.mid = make([]float32, np*t.ffn)

	t.embedPatches(s.h, px.Norm, W, pw, ph)
	rows, cols := blockOrder(pw, ph)
	t.addPositions(s.h, pw, ph)
	for i := range t.blocks {
		t.block(&t.blocks[i], &s, np, rows, cols)
	}
	// Merger: LayerNorm per patch, then each run of four sequence elements
	// (one 2×2 block) is one 4C-wide row.
	t.layerNorm(s.x, s.h, t.postW, t.postB, np)
	nm := np / 4
	mid := make([]float32, nm*4*C)
	t.linear(mid, t.mm0, t.mm0B, s.x, nm)
	t.pool.For(nm, func(lo, hi int) { gelu(mid[lo*4*C : hi*4*C]) })
	e := &Embeddings{GridX: pw / 2, GridY: ph / 2, Dim: t.outDim, Data: make([]float32, nm*t.outDim)}
	t.linear(e.Data, t.mm2, t.mm2B, mid, nm)
	return e, nil
}

// blockOrder returns the patch row and column of every sequence element:
// 2×2 blocks in raster order, and inside a block (0,0), (0,1), (1,0), (1,1).
func blockOrder(pw, ph int) (rows, cols []int) {
	rows, cols = make([]int, pw*ph), make([]int, pw*ph)
	for y := range ph {
		for x := range pw {
			k := ((y/2*(pw/2)+x/2)*2+y%2)*2 + x%2
			rows[k], cols[k] = y, x
		}
	}
	return rows, cols
}

// embedPatches computes the patch embedding into h (block order): the
// fp16-rounded 16×16×3 window of each patch times the summed kernel, plus
// the bias.
func (t *Tower) embedPatches(h, img []float32, W, pw, ph int) {
	C, p := t.hidden, t.patch
	K := 3 * p * p
	rows, cols := blockOrder(pw, ph)
	// Chunks of whole 2×2 blocks: four rows at a time take one path through
	// MulAdd's register tiles whatever the thread count, so results do not
	// depend on it.
	t.pool.For(pw*ph/4, func(lo, hi int) {
		lo, hi = 4*lo, 4*hi
		// The windows of this chunk's patches, one row each, then one
		// matrix product for the chunk.
		win := make([]float32, (hi-lo)*K)
		for k := lo; k < hi; k++ {
			y, x := rows[k], cols[k]
			col := win[(k-lo)*K : (k-lo+1)*K]
			for c := range 3 {
				for ky := range p {
					row := img[((y*p+ky)*W+x*p)*3:]
					for kx := range p {
						col[(c*p+ky)*p+kx] = round16(row[kx*3+c])
					}
				}
			}
			copy(h[k*C:(k+1)*C], t.patchB)
		}
		ops.MulAdd(h[lo*C:hi*C], C, win, K, 1, t.patchW, C, hi-lo, C, K)
	})
}

// addPositions adds the learned position table, resampled to the patch
// grid with align-corners bilinear interpolation when it differs, to h.
func (t *Tower) addPositions(h []float32, pw, ph int) {
	C, S := t.hidden, t.side
	sf := func(n int) float32 {
		if n <= 1 {
			return 0
		}
		return float32(S-1) / float32(n-1)
	}
	fx, fy := sf(pw), sf(ph)
	row := func(x, y int) []float32 { return t.pos[(y*S+x)*C : (y*S+x+1)*C] }
	for y := range ph {
		for x := range pw {
			k := ((y/2*(pw/2)+x/2)*2+y%2)*2 + x%2
			dst := h[k*C : (k+1)*C]
			if pw == S && ph == S {
				ops.Add(dst, dst, row(x, y))
				continue
			}
			sx, sy := float32(x)*fx, float32(y)*fy
			x0, y0 := int(sx), int(sy)
			x1, y1 := min(x0+1, S-1), min(y0+1, S-1)
			dx, dy := sx-float32(x0), sy-float32(y0)
			t00, t10, t01, t11 := row(x0, y0), row(x1, y0), row(x0, y1), row(x1, y1)
			for i := range dst {
				v := t00[i]*(1-dx)*(1-dy) + t10[i]*dx*(1-dy) + t01[i]*(1-dx)*dy + t11[i]*dx*dy
				dst[i] += v
			}
		}
	}
}

// layerNorm writes LN(x; w, b) of n rows of hidden width into dst.
func (t *Tower) layerNorm(dst, x, w, b []float32, n int) {
	C := t.hidden
	t.pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			layerNorm(dst[r*C:(r+1)*C], x[r*C:(r+1)*C], w, b, t.eps)
		}
	})
}

// layerNorm is (x − μ)/√(σ² + ε)·w + b with the population variance.
func layerNorm(dst, x, w, b []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum / float64(len(x)))
	var sq float64
	for i, v := range x {
		d := v - mean
		dst[i] = d
		sq += float64(d) * float64(d)
	}
	scale := float32(1 / math.Sqrt(sq/float64(len(x))+float64(eps)))
	for i := range dst {
		dst[i] = dst[i]*scale*w[i] + b[i]
	}
}

// linear computes dst = x·Wᵀ + bias for n rows through the packed kernels.
func (t *Tower) linear(dst []float32, l interface {
	Forward(dst, x []float32, n int)
	Out() int
}, bias, x []float32, n int) {
	l.Forward(dst, x, n)
	out := l.Out()
	t.pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ops.Add(dst[r*out:(r+1)*out], dst[r*out:(r+1)*out], bias)
		}
	})
}

// block runs one ViT block on s.h in place.
func (t *Tower) block(b *block, s *scratch, np int, rows, cols []int) {
	t.layerNorm(s.x, s.h, b.ln1W, b.ln1B, np)
	t.linear(s.qkv, b.qkv, b.qkvB, s.x, np)
	t.rope(s.qkv, np, rows, cols)
	t.attend(s, np)
	t.linear(s.x, b.out, b.outB, s.att, np)
	ops.Add(s.h, s.h, s.x)
	t.layerNorm(s.x, s.h, b.ln2W, b.ln2B, np)
	t.linear(s.mid, b.up, b.upB, s.x, np)
	t.pool.For(np, func(lo, hi int) { gelu(s.mid[lo*t.ffn : hi*t.ffn]) })
	t.linear(s.x, b.down, b.downB, s.mid, np)
	ops.Add(s.h, s.h, s.x)
}

// rope applies the 2D rotary embedding to the q and k heads of qkv: with
// head dim d, pair (i, i+d/2) turns by the patch row times
// base^(−2i/(d/2)) for i < d/4 and by the column times
// base^(−2(i−d/4)/(d/2)) for d/4 ≤ i < d/2.
func (t *Tower) rope(qkv []float32, np int, rows, cols []int) {
	C := t.hidden
	d := C / t.heads
	half, quarter := d/2, d/4
	freq := make([]float32, quarter)
	for i := range freq {
		freq[i] = float32(math.Pow(ropeBase, -2*float64(i)/float64(half)))
	}
	t.pool.For(np, func(lo, hi int) {
		cos, sin := make([]float32, half), make([]float32, half)
		for k := lo; k < hi; k++ {
			for i := range half {
				p, j := rows[k], i
				if i >= quarter {
					p, j = cols[k], i-quarter
				}
				s, c := math.Sincos(float64(float32(p) * freq[j]))
				cos[i], sin[i] = float32(c), float32(s)
			}
			for hd := range 2 * t.heads { // q heads, then k heads
				head := qkv[k*3*C+hd*d : k*3*C+(hd+1)*d]
				for i := range half {
					x0, x1 := head[i], head[i+half]
					head[i] = x0*cos[i] - x1*sin[i]
					head[i+half] = x0*sin[i] + x1*cos[i]
				}
			}
		}
	})
}

// queryTile is the number of queries a work item of attend handles.
const queryTile = 32

// attend computes full bidirectional attention over the np patches into
// s.att: per head softmax(q·kᵀ/√d)·v, as matrix products.
func (t *Tower) attend(s *scratch, np int) {
	C := t.hidden
	d := C / t.heads
	// Values padded with zero columns to a multiple of MulAdd's tile width
	// (72 → 80), so that the weighted sum runs in its register tiles alone
	// rather than finishing each row's last columns in plain Go.
	_, tc := ops.MulAddTile()
	dp := (d + tc - 1) / tc * tc
	// Keys transposed per head, so q·kᵀ is a product of row-major matrices.
	if cap(s.kt) < np*C {
		s.kt = make([]float32, np*C)
	}
	if cap(s.vp) < np*t.heads*dp {
		s.vp = make([]float32, np*t.heads*dp)
	}
	kt, vp := s.kt[:np*C], s.vp[:np*t.heads*dp]
	t.pool.For(t.heads, func(lo, hi int) {
		for h := lo; h < hi; h++ {
			for j := range np {
				k := s.qkv[j*3*C+C+h*d:]
				for i := range d {
					kt[(h*d+i)*np+j] = k[i]
				}
				v := vp[(h*np+j)*dp : (h*np+j+1)*dp]
				copy(v, s.qkv[j*3*C+2*C+h*d:j*3*C+2*C+(h+1)*d])
				clear(v[d:])
			}
		}
	})
	tiles := (np + queryTile - 1) / queryTile
	scale := float32(1 / math.Sqrt(float64(d)))
	t.pool.For(t.heads*tiles, func(lo, hi int) {
		sc := make([]float32, queryTile*np)
		out := make([]float32, queryTile*dp)
		for item := lo; item < hi; item++ {
			h, q0 := item/tiles, item%tiles*queryTile
			m := min(queryTile, np-q0)
			sc := sc[:m*np]
			clear(sc)
			ops.MulAdd(sc, np, s.qkv[q0*3*C+h*d:], 3*C, 1, kt[h*d*np:], np, m, np, d)
			for r := range m {
				row := sc[r*np : (r+1)*np]
				ops.Scale(row, scale)
				ops.Softmax(row)
			}
			o := out[:m*dp]
			clear(o)
			ops.MulAdd(o, dp, sc, np, 1, vp[h*np*dp:], dp, m, dp, np)
			for r := range m {
				copy(s.att[(q0+r)*C+h*d:(q0+r)*C+(h+1)*d], o[r*dp:r*dp+d])
			}
		}
	})
}
