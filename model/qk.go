package model

import (
	"trit/kernels"
	"trit/model/kvcache"
	"trit/ops"
)

// QK is the per-token preparation of an attention layer's queries and
// keys that every architecture shares: per-head RMSNorm of q and k (when
// QNorm and KNorm are set), RoPE, and storing k and v into the cache (which
// rotates a quantized K or V; q gets the same rotation here).
type QK struct {
	Attn         *Attention
	QNorm, KNorm []float32
	Eps          float32
	Rope         *ops.Rope
	// Sections are the M-RoPE sections (rope.dimension_sections); zero
	// for plain RoPE.
	Sections [4]int

	pos, owner []int // row r is token pos[r] of seqs[owner[r]]
}

// Prepare runs over every token of seqs on the pool: q holds the tokens'
// query rows (Heads×HeadDim each, in seqs order; seqs[i].Q are views of
// it), k and v their key and value rows (KVHeads×HeadDim), tabs their RoPE
// tables (RopeTables). Each sequence's cache must have room (Grow).
func (p *QK) Prepare(pool *kernels.Pool, layer int, seqs []AttnSeq, q, k, v, tabs []float32) {
	a := p.Attn
	hd := a.HeadDim
	qd, kvd := a.Heads*hd, a.KVHeads*hd
	tl := p.Rope.TableLen()
	n := rowMap(seqs, &p.pos, &p.owner)
	pos, owner := p.pos, p.owner
	pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			qr, kr := q[r*qd:(r+1)*qd], k[r*kvd:(r+1)*kvd]
			if p.QNorm != nil {
				for h := range a.Heads {
					ops.RMSNorm(qr[h*hd:(h+1)*hd], qr[h*hd:(h+1)*hd], p.QNorm, p.Eps)
				}
			}
			if p.KNorm != nil {
				for h := range a.KVHeads {
					ops.RMSNorm(kr[h*hd:(h+1)*hd], kr[h*hd:(h+1)*hd], p.KNorm, p.Eps)
				}
			}
			tab := tabs[r*tl : (r+1)*tl]
			p.Rope.ApplyTable(qr, a.Heads, tab)
			p.Rope.ApplyTable(kr, a.KVHeads, tab)
			c := seqs[owner[r]].Cache
			if cfg := c.Config(); cfg.Rotate && kvcache.Quantized(cfg.K) {
				kvcache.Rotate(qr, hd)
			}
			c.Store(layer, pos[r], kr, v[r*kvd:(r+1)*kvd])
		}
	})
}

// rowMap sets pos[r] and owner[r] to the position and sequence of row r
// of seqs' tokens and returns the number of rows.
func rowMap(seqs []AttnSeq, pos, owner *[]int) int {
	n := 0
	for _, s := range seqs {
		n += s.NTok
	}
	growTo(pos, n)
	growTo(owner, n)
	r := 0
	for si, s := range seqs {
		for j := range s.NTok {
			(*pos)[r], (*owner)[r] = s.Pos0+j, si
			r++
		}
	}
	return n
}

// RopeTables fills tabs (grown as needed) with the RoPE tables of every
// token of seqs at its position (its Rope ids where set), on the pool, and
// returns it.
func (p *QK) RopeTables(pool *kernels.Pool, seqs []AttnSeq, tabs *[]float32) []float32 {
	tl := p.Rope.TableLen()
	n := rowMap(seqs, &p.pos, &p.owner)
	t := growTo(tabs, n*tl)
	pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			pos := TextPos(p.pos[r])
			if s := &seqs[p.owner[r]]; s.Rope != nil {
				pos = s.Rope[p.pos[r]-s.Pos0]
			}
			if p.Sections == ([4]int{}) {
				p.Rope.Table(pos[0], t[r*tl:(r+1)*tl])
			} else {
				p.Rope.TableSections(pos, p.Sections, t[r*tl:(r+1)*tl])
			}
		}
	})
	return t
}

// Seqs grows every step's state for its tokens and returns the steps'
// attention view in buf: step i's cache (cache returns it), position and
// token count, with Q and Out its rows of q and out.
func (a *Attention) Seqs(steps []Step, cache func(State) *kvcache.Cache, q, out []float32, buf *[]AttnSeq) ([]AttnSeq, error) {
	seqs := growTo(buf, len(steps))
	qd := a.Heads * a.HeadDim
	r := 0
	for i, st := range steps {
		if err := st.State.Grow(len(st.Tokens)); err != nil {
			return nil, err
		}
		nt := len(st.Tokens)
		c := cache(st.State)
		seqs[i] = AttnSeq{Cache: c, Q: q[r*qd : (r+nt)*qd], Out: out[r*qd : (r+nt)*qd], Pos0: c.Len(), NTok: nt}
		r += nt
	}
	return seqs, nil
}

// Advance records that the sequences' tokens are stored in every layer.
func Advance(seqs []AttnSeq) {
	for _, s := range seqs {
		s.Cache.Advance(s.Pos0 + s.NTok)
	}
}
