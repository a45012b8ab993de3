package qwen35

import (
	"math"

	"trit/model"
	"trit/ops"
)

// Tile sizes of the prefill attention: a work item holds queryTile tokens
// of every query head of one KV head, and walks the cache in blocks of
// keyTile positions, so each block of keys and values (2·keyTile·headDim
// floats) is read once per work item while it is hot in cache, instead of
// once per query head and token.
const (
	queryTile = 16
	keyTile   = 64
)

// attendTiled computes causal grouped-query attention for the nt tokens of
// one sequence at positions pos0…pos0+nt−1, whose keys and values are
// already in kv; q and out hold nt×Heads×HeadDim floats. It keeps a running
// maximum and sum per query (online softmax), so no score row of the whole
// context is materialised. Single-token decoding uses model.Attention.Attend.
func (m *Model) attendTiled(out, q []float32, kv *model.KV, nt, pos0 int) {
	a := &m.attn
	hd := a.HeadDim
	kvDim := a.KVHeads * hd
	group := a.Heads / a.KVHeads
	tiles := (nt + queryTile - 1) / queryTile
	m.pool.For(a.KVHeads*tiles, func(lo, hi int) {
		rows := queryTile * group
		acc := make([]float32, rows*hd)
		mx := make([]float32, rows)
		sum := make([]float64, rows)
		scores := make([]float32, keyTile)
		for w := lo; w < hi; w++ {
			g, tile := w/tiles, w%tiles
			t0 := tile * queryTile
			t1 := min(nt, t0+queryTile)
			n := (t1 - t0) * group
			clear(acc[:n*hd])
			for r := range n {
				mx[r] = float32(math.Inf(-1))
				sum[r] = 0
			}
			last := pos0 + t1 - 1 // the last position any query of the tile sees
			for j0 := 0; j0 <= last; j0 += keyTile {
				for r := range n {
					t := t0 + r/group
					h := g*group + r%group
					jEnd := min(j0+keyTile, pos0+t+1)
					if jEnd <= j0 {
						continue
					}
					qv := q[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
					s := scores[:jEnd-j0]
					bm := mx[r]
					for j := range s {
						p := j0 + j
						s[j] = ops.Dot(qv, kv.K[p*kvDim+g*hd:p*kvDim+(g+1)*hd]) * a.Scale
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
						p := j0 + j
						e := expNeg(sj - bm)
						sum[r] += float64(e)
						ops.Axpy(o, e, kv.V[p*kvDim+g*hd:p*kvDim+(g+1)*hd])
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

// expNeg returns e^x for x ≤ 0 in float32 to within a few ulp, and 0 for
// x < −87 (near the bottom of the normal range). Softmax weights need no
// more, and it is several times cheaper than math.Exp, which dominated the
// prefill attention. The reduction and polynomial are Cephes' expf:
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
