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
	pool.For(a.KVHeads*tiles, func(lo, hi int) {
		sc := scratchPool.Get().(*attnScratch)
		defer scratchPool.Put(sc)
		rows := min(queryTile, nTok) * group
		acc := growTo(&sc.acc, rows*hd)
		mx := growTo(&sc.mx, rows)
		sum := growTo(&sc.sum, rows)
		scores := growTo(&sc.scores, keyTile)
		var kb, vb []float32
		if kv.k == nil {
			kb, vb = growTo(&sc.kb, keyTile*hd), growTo(&sc.vb, keyTile*hd)
		}
		for w := lo; w < hi; w++ {
			g, tile := w/tiles, w%tiles
			t0 := tile * queryTile
			t1 := min(nTok, t0+queryTile)
			n := (t1 - t0) * group
			clear(acc[:n*hd])
			for r := range n {
				mx[r] = float32(math.Inf(-1))
				sum[r] = 0
			}
			last := pos0 + t1 - 1 // the last position any query of the tile sees
			for j0 := 0; j0 <= last; j0 += keyTile {
				j1 := min(j0+keyTile, last+1)
				ks, vs, stride := kv.block(j0, j1, g*hd, hd, kb, vb)
				for r := range n {
					t := t0 + r/group
					h := g*group + r%group
					jEnd := min(j1, pos0+t+1)
					if jEnd <= j0 {
						continue
					}
					qv := q[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
					s := scores[:jEnd-j0]
					bm := mx[r]
					for j := range s {
						s[j] = ops.Dot(qv, ks[j*stride:j*stride+hd]) * a.Scale
						bm = max(bm, s[j])
					}
					o := acc[r*hd : (r+1)*hd]
					if bm > mx[r] {
						// Rescale what was accumulated under the old maximum.
						c := expNeg(mx[r] - bm)
						ops.Scale(o, c)
						sum[r] *= float64(c)
						mx[r] = bm
					}
					for j, sj := range s {
						e := expNeg(sj - bm)
						sum[r] += float64(e)
						ops.Axpy(o, e, vs[j*stride:j*stride+hd])
					}
				}
			}
			for r := range n {
				t := t0 + r/group
				h := g*group + r%group
				dst := out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
				inv := float32(1 / sum[r])
				for i, v := range acc[r*hd : (r+1)*hd] {
					dst[i] = v * inv
				}
			}
		}
	})
}

// attnScratch is the working memory of one Attend work chunk, recycled
// so that decoding a token allocates nothing per layer.
type attnScratch struct {
	acc, mx, scores, kb, vb []float32
	sum                     []float64
}

var scratchPool = sync.Pool{New: func() any { return new(attnScratch) }}

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
