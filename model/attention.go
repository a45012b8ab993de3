package model

import (
	"fmt"
	"math"
	"sync"

	"trit/kernels"
	"trit/ops"
)

// KV is the attention cache of one layer of one sequence: the keys and
// values of every position, dim = kvHeads×headDim numbers each, stored as
// float32 or, at half the memory, as fp16.
type KV struct {
	dim      int
	k, v     []float32
	k16, v16 []byte // fp16, little-endian
}

// KV cache element types.
const (
	KVF32 = "f32"
	KVF16 = "f16"
)

// NewKV allocates caches for layers layers of capacity positions of dim
// numbers, of element type typ (KVF32 or KVF16; "" means KVF16).
func NewKV(layers, capacity, dim int, typ string) (Caches, error) {
	kv := make(Caches, layers)
	for i := range kv {
		kv[i].dim = dim
		switch typ {
		case KVF32:
			kv[i].k = make([]float32, capacity*dim)
			kv[i].v = make([]float32, capacity*dim)
		case KVF16, "":
			kv[i].k16 = make([]byte, 2*capacity*dim)
			kv[i].v16 = make([]byte, 2*capacity*dim)
		default:
			return nil, fmt.Errorf("model: KV cache type %q is not supported (f32, f16)", typ)
		}
	}
	return kv, nil
}

// Store writes the key and value of position pos.
func (c *KV) Store(pos int, k, v []float32) {
	d := c.dim
	if c.k != nil {
		copy(c.k[pos*d:(pos+1)*d], k)
		copy(c.v[pos*d:(pos+1)*d], v)
		return
	}
	ops.F32ToF16(c.k16[2*pos*d:2*(pos+1)*d], k)
	ops.F32ToF16(c.v16[2*pos*d:2*(pos+1)*d], v)
}

// Bytes returns the memory the cache holds.
func (c *KV) Bytes() int64 {
	return int64(4*(len(c.k)+len(c.v)) + len(c.k16) + len(c.v16))
}

// Clone returns an independent copy of the cache.
func (c *KV) Clone() KV {
	return KV{dim: c.dim, k: clone(c.k), v: clone(c.v), k16: clone(c.k16), v16: clone(c.v16)}
}

// Caches is the attention caches of a sequence's layers.
type Caches []KV

// Bytes returns the memory the caches hold.
func (c Caches) Bytes() int64 {
	var n int64
	for i := range c {
		n += c[i].Bytes()
	}
	return n
}

// Clone returns an independent copy of every cache.
func (c Caches) Clone() Caches {
	out := make(Caches, len(c))
	for i := range c {
		out[i] = c[i].Clone()
	}
	return out
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}

// block returns the keys and values of head columns [off, off+n) for
// positions [p0, p1) as float32 rows stride apart: views of a float32
// cache, or fp16 rows converted into kb and vb.
func (c *KV) block(p0, p1, off, n int, kb, vb []float32) (k, v []float32, stride int) {
	d := c.dim
	if c.k != nil {
		return c.k[p0*d+off:], c.v[p0*d+off:], d
	}
	for p := p0; p < p1; p++ {
		j := p - p0
		ops.F16ToF32(kb[j*n:(j+1)*n], c.k16[2*(p*d+off):2*(p*d+off+n)])
		ops.F16ToF32(vb[j*n:(j+1)*n], c.v16[2*(p*d+off):2*(p*d+off+n)])
	}
	return kb, vb, n
}

// Attention describes a multi-head attention with grouped KV heads.
type Attention struct {
	Heads, KVHeads, HeadDim int
	Scale                   float32 // applied to q·k
}

// Tile sizes: a work item holds queryTile tokens of every query head of one
// KV head, and walks the cache in blocks of keyTile positions, so each
// block of keys and values is read (and, for fp16, converted) once per work
// item while it is hot in cache, instead of once per query head and token.
const (
	queryTile = 16
	keyTile   = 64
)

// Attend computes causal attention for nTok consecutive query tokens of one
// sequence, the first at position pos0; the cache must already hold keys
// and values for positions 0..pos0+nTok-1. q holds nTok×Heads×HeadDim
// floats; out receives the same shape. It keeps a running maximum and sum
// per query (online softmax), so no score row of the whole context is
// materialised.
func (a *Attention) Attend(pool *kernels.Pool, out, q []float32, kv *KV, nTok, pos0 int) {
	hd := a.HeadDim
	group := a.Heads / a.KVHeads
	tiles := (nTok + queryTile - 1) / queryTile
	tr, tc := ops.MulAddTile()
	pool.For(a.KVHeads*tiles, func(lo, hi int) {
		sc := scratchPool.Get().(*attnScratch)
		defer scratchPool.Put(sc)
		rows := min(queryTile, nTok) * group
		growTo(&sc.acc, roundUp(rows, tr)*hd)
		growTo(&sc.mx, rows)
		growTo(&sc.sum, rows)
		if kv.k == nil {
			growTo(&sc.kb, keyTile*hd)
			growTo(&sc.vb, keyTile*hd)
		}
		for w := lo; w < hi; w++ {
			g, tile := w/tiles, w%tiles
			t0 := tile * queryTile
			t1 := min(nTok, t0+queryTile)
			n := (t1 - t0) * group
			it := attnItem{a: a, sc: sc, q: q, kv: kv, g: g, group: group, t0: t0, pos0: pos0,
				n: n, n4: roundUp(n, tr), nPad: roundUp(n, tc)}
			it.begin()
			it.matrices()
			it.finish(out)
		}
	})
}

// attnItem is one work item of Attend: n query rows, tokens t0.. of the
// query heads of KV head g, row r being token t0+r/group, head
// g·group+r%group. Its matrix products pad the rows to n4 and the columns
// of the scores to nPad, whole tiles of ops.MulAdd (see matrices).
type attnItem struct {
	a            *Attention
	sc           *attnScratch
	q            []float32
	kv           *KV
	g, group, t0 int
	pos0, n      int
	n4, nPad     int
}

// row returns the token and query head of row r.
func (it *attnItem) row(r int) (t, h int) {
	return it.t0 + r/it.group, it.g*it.group + r%it.group
}

// visible returns how many of the keys from position j0 on row r may see.
func (it *attnItem) visible(r, j0 int) int {
	t, _ := it.row(r)
	return it.pos0 + t + 1 - j0
}

// last returns the last position any row of the item sees.
func (it *attnItem) last() int {
	t, _ := it.row(it.n - 1)
	return it.pos0 + t
}

// begin resets the accumulators.
func (it *attnItem) begin() {
	sc := it.sc
	clear(sc.acc[:it.n4*it.a.HeadDim])
	for r := range it.n {
		sc.mx[r] = float32(math.Inf(-1))
		sc.sum[r] = 0
	}
}

// raise moves row r's running maximum up to bm if that is higher,
// rescaling what was accumulated under the old maximum.
func (it *attnItem) raise(r int, bm float32) {
	sc := it.sc
	if bm > sc.mx[r] {
		hd := it.a.HeadDim
		c := expNeg(sc.mx[r] - bm)
		ops.Scale(sc.acc[r*hd:(r+1)*hd], c)
		sc.sum[r] *= float64(c)
		sc.mx[r] = bm
	}
}

// matrices runs the item a key block at a time as two matrix products:
// the scores S = K·Qᵀ of the block's keys against every row, then, after
// the online-softmax update turns S into weights P, O += P·V.
func (it *attnItem) matrices() {
	a, sc, hd, n, n4, nPad := it.a, it.sc, it.a.HeadDim, it.n, it.n4, it.nPad
	// Both products run in MulAdd's register tiles alone when their rows
	// and columns are whole tiles: Qᵀ (hd×nPad, pre-scaled) gets zero
	// columns, which score 0, and P zero rows, which add nothing to their
	// padding rows of O.
	qt := growTo(&sc.qt, hd*nPad)
	// Transpose in runs of 16 rows, so that the writes go along Qᵀ's
	// rows and the reads stay within 16 cache-resident query rows.
	for r0 := 0; r0 < n; r0 += 16 {
		rn := min(16, n-r0)
		var base [16]int
		for r := range rn {
			t, h := it.row(r0 + r)
			base[r] = (t*a.Heads + h) * hd
		}
		for i := range hd {
			dst := qt[i*nPad+r0 : i*nPad+r0+rn]
			for r, b := range base[:rn] {
				dst[r] = it.q[b+i] * a.Scale
			}
		}
	}
	for i := range hd {
		clear(qt[i*nPad+n : (i+1)*nPad])
	}
	st := growTo(&sc.st, keyTile*nPad)
	p := growTo(&sc.p, n4*keyTile)
	last := it.last()
	for j0 := 0; j0 <= last; j0 += keyTile {
		j1 := min(j0+keyTile, last+1)
		nk := j1 - j0
		ks, vs, stride := it.kv.block(j0, j1, it.g*hd, hd, sc.kb, sc.vb)
		s := st[:nk*nPad]
		clear(s)
		ops.MulAdd(s, nPad, ks, stride, 1, qt, nPad, nk, nPad, hd)
		// Gather each row's scores (a column of s) into P, row r nk apart;
		// masked keys get weight 0.
		for r := range n {
			pr := p[r*nk : (r+1)*nk]
			m := max(0, min(nk, it.visible(r, j0)))
			bm := sc.mx[r]
			for j := range m {
				x := s[j*nPad+r]
				pr[j] = x
				if x > bm {
					bm = x
				}
			}
			clear(pr[m:])
			if m == 0 {
				continue
			}
			it.raise(r, bm)
			sc.sum[r] += ops.ExpSub(pr[:m], bm)
		}
		clear(p[n*nk : n4*nk])
		ops.MulAdd(sc.acc, hd, p, nk, 1, vs, stride, n4, hd, nk)
	}
}

// finish writes the item's normalised rows to out.
func (it *attnItem) finish(out []float32) {
	a, sc, hd := it.a, it.sc, it.a.HeadDim
	for r := range it.n {
		t, h := it.row(r)
		dst := out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
		inv := float32(1 / sc.sum[r])
		for i, v := range sc.acc[r*hd : (r+1)*hd] {
			dst[i] = v * inv
		}
	}
}

// attnScratch is the working memory of one Attend work chunk, recycled
// so that decoding a token allocates nothing per layer: the accumulated
// rows, running maxima and sums, fp16 blocks converted, and Qᵀ, Sᵀ and P.
type attnScratch struct {
	acc, mx, kb, vb, qt, st, p []float32
	sum                        []float64
}

var scratchPool = sync.Pool{New: func() any { return new(attnScratch) }}

// roundUp returns n rounded up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// growTo returns (*b)[:n], reallocating when the capacity is short.
func growTo[T any](b *[]T, n int) []T {
	if cap(*b) < n {
		*b = make([]T, n)
	}
	*b = (*b)[:n]
	return *b
}

// expNeg returns e^x for x ≤ 0 in float32 to within a few ulp, and 0 below
// the normal range. Softmax weights need no more, and it is several times
// cheaper than math.Exp. The reduction and polynomial are Cephes' expf:
// x = k·ln2 + r, |r| ≤ ln2/2, e^r by a polynomial, 2^k set in the exponent
// bits.
func expNeg(x float32) float32 {
	if x < -87 {
		return 0
	}
	// Round x·log₂e to the nearest integer: for x ≤ 0, truncating
	// x·log₂e − 0.5 toward zero does it without a call to math.Floor.
	ki := int32(x*1.44269504088896341 - 0.5)
	k := float32(ki)
	r := x - k*0.693359375 + k*2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	return y * math.Float32frombits(uint32(ki+127)<<23)
}

// DefaultScale is 1/√headDim.
func DefaultScale(headDim int) float32 { return float32(1 / math.Sqrt(float64(headDim))) }
