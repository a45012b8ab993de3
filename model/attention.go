package model

import (
	"math"
	"sync"

	"trit/kernels"
	"trit/model/kvcache"
	"trit/ops"
)

// Attention describes a multi-head attention with grouped KV heads.
type Attention struct {
	Heads, KVHeads, HeadDim int
	Scale                   float32 // applied to q·k
}

// AttnSeq is one sequence's share of an Attend call: NTok query tokens at
// positions Pos0.., whose keys and values the cache already holds.
type AttnSeq struct {
	Cache      *kvcache.Cache
	Q, Out     []float32 // NTok×Heads×HeadDim each
	Pos0, NTok int
	// Rope holds the tokens' rotary position ids where they are not their
	// cache positions (images, M-RoPE; see PlaceRope); nil otherwise.
	Rope [][4]int
}

// splitTokens is the most query tokens per sequence for which Attend
// splits a sequence's positions over the pool (flash-decoding); longer
// runs get their parallelism from query tiles instead.
const splitTokens = 4

// queryTile is the number of tokens a work item of an unsplit sequence
// takes: its rows share each read of a page's keys and values.
const queryTile = 16

// Attend computes causal attention for the sequences of one layer in one
// parallel pass. Each query row's result is computed the same way whatever
// the batch: the positions are cut at page boundaries into chunks, each
// chunk yields a softmax partial (maximum, sum, weighted sum of values)
// from a fixed sequence of kernel calls, and the partials are merged in
// position order. Only who computes a chunk and when differs between a
// split sequence (chunks on different workers, merged afterwards) and an
// unsplit one (chunks one after another in one work item), so a token's
// output is bit-identical alone, in a batch, or among the tokens of a
// speculative verify step.
func (a *Attention) Attend(pool *kernels.Pool, layer int, seqs []AttnSeq) {
	group := a.Heads / a.KVHeads
	var items []attnItem
	var parts int
	for si := range seqs {
		s := &seqs[si]
		if s.NTok == 0 {
			continue
		}
		chunks := (s.Pos0 + s.NTok + kvcache.PageSize - 1) / kvcache.PageSize
		for g := range a.KVHeads {
			if s.NTok <= splitTokens {
				for c := range chunks {
					items = append(items, attnItem{seq: si, g: g, t0: 0, t1: s.NTok, c0: c, c1: c + 1, part: parts})
					parts += s.NTok * group
				}
				continue
			}
			for t0 := 0; t0 < s.NTok; t0 += queryTile {
				items = append(items, attnItem{seq: si, g: g, t0: t0, t1: min(s.NTok, t0+queryTile), c0: 0, c1: chunks, part: -1})
			}
		}
	}
	hd := a.HeadDim
	p := partialsPool.Get().(*partials)
	defer partialsPool.Put(p)
	p.grow(parts, hd)
	// Every query row is prepared for K's format (Q8_0 blocks for a
	// quantized K) once, whatever the number of work items that read it.
	n := 0
	p.qbase = growTo(&p.qbase, len(seqs))
	for si, s := range seqs {
		p.qbase[si] = n
		n += s.NTok * a.Heads
	}
	if cap(p.qs) < n {
		p.qs = append(p.qs[:cap(p.qs)], make([]kvcache.Query, n-cap(p.qs))...)
	}
	p.qs = p.qs[:n]
	pool.For(len(seqs), func(lo, hi int) {
		for si := lo; si < hi; si++ {
			s := &seqs[si]
			k := s.Cache.Config().K
			for i := range s.NTok * a.Heads {
				p.qs[p.qbase[si]+i].Prepare(k, s.Q[i*hd:(i+1)*hd])
			}
		}
	})
	pool.For(len(items), func(lo, hi int) {
		w := workerPool.Get().(*attnWorker)
		defer workerPool.Put(w)
		for i := lo; i < hi; i++ {
			a.run(w, layer, seqs, &items[i], p)
		}
	})
	if parts == 0 {
		return
	}
	// Merge the split sequences' partials, chunk by chunk in order.
	type mergeItem struct{ seq, g, part, chunks int }
	var merges []mergeItem
	for _, it := range items {
		if it.part >= 0 && it.c0 == 0 {
			s := &seqs[it.seq]
			merges = append(merges, mergeItem{it.seq, it.g, it.part, (s.Pos0 + s.NTok + kvcache.PageSize - 1) / kvcache.PageSize})
		}
	}
	pool.For(len(merges), func(lo, hi int) {
		w := workerPool.Get().(*attnWorker)
		defer workerPool.Put(w)
		for _, m := range merges[lo:hi] {
			s := &seqs[m.seq]
			rows := s.NTok * group
			run := w.running(rows, hd)
			for c := range m.chunks {
				base := m.part + c*rows
				for r := range rows {
					run.merge(r, hd, p.mx[base+r], p.sum[base+r], p.acc[(base+r)*hd:(base+r+1)*hd])
				}
			}
			a.finish(s, m.g, 0, s.NTok, run)
		}
	})
}

// attnItem is one work item: tokens [t0, t1) of the query heads of KV head
// g of sequence seq, over chunks [c0, c1). part >= 0 is where its chunk's
// partials go (split sequences); -1 means it merges its chunks itself and
// writes the output.
type attnItem struct {
	seq, g, t0, t1, c0, c1, part int
}

// run computes one work item.
func (a *Attention) run(w *attnWorker, layer int, seqs []AttnSeq, it *attnItem, p *partials) {
	s := &seqs[it.seq]
	hd := a.HeadDim
	group := a.Heads / a.KVHeads
	rows := (it.t1 - it.t0) * group
	w.grow(rows, hd)
	for r := range rows {
		t, h := it.t0+r/group, it.g*group+r%group
		w.q[r] = p.qs[p.qbase[it.seq]+t*a.Heads+h]
	}
	var run *running
	if it.part < 0 {
		run = w.running(rows, hd)
	}
	for c := it.c0; c < it.c1; c++ {
		c0 := c * kvcache.PageSize
		last := s.Pos0 + it.t1 - 1 // the last position any row sees
		if c0 > last {
			break
		}
		c1 := min(c0+kvcache.PageSize, last+1)
		s.Cache.Open(&w.block, layer, it.g, c0, c1, rows)
		for r := range rows {
			t := it.t0 + r/group
			w.ns[r] = max(0, min(c1, s.Pos0+t+1)-c0) // keys of the chunk row r sees
		}
		w.block.ScoresRows(w.scores, w.q[:rows], w.ns[:rows])
		for r := range rows {
			n := w.ns[r]
			var mx float32
			var sum float64
			acc := w.acc[r*hd : (r+1)*hd]
			if n == 0 {
				mx, sum = float32(math.Inf(-1)), 0
				clear(acc)
			} else {
				mx, sum = a.chunk(w, w.scores[r*kvcache.PageSize:r*kvcache.PageSize+n], acc)
			}
			if run != nil {
				if n > 0 {
					run.merge(r, hd, mx, sum, acc)
				}
				continue
			}
			i := it.part + (c-it.c0)*rows + r
			p.mx[i], p.sum[i] = mx, sum
			copy(p.acc[i*hd:(i+1)*hd], acc)
		}
	}
	if run != nil {
		a.finish(s, it.g, it.t0, it.t1, run)
	}
}

// chunk computes the softmax partial of one query row from its scores s
// against the first len(s) keys of a chunk: the maximum score,
// Σ e^(s−max), and acc = Σ e^(s−max)·v.
func (a *Attention) chunk(w *attnWorker, s, acc []float32) (float32, float64) {
	ops.Scale(s, a.Scale)
	mx := kvcache.Max(s)
	sum := ops.ExpSub(s, mx)
	w.block.Accumulate(acc, s)
	return mx, sum
}

// finish writes the normalised rows of tokens [t0, t1) of KV head g.
func (a *Attention) finish(s *AttnSeq, g, t0, t1 int, run *running) {
	hd := a.HeadDim
	group := a.Heads / a.KVHeads
	cfg := s.Cache.Config()
	for r := range (t1 - t0) * group {
		t, h := t0+r/group, g*group+r%group
		dst := s.Out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
		inv := float32(1 / run.sum[r])
		for i, v := range run.acc[r*hd : (r+1)*hd] {
			dst[i] = v * inv
		}
		if cfg.Rotate && kvcache.Quantized(cfg.V) {
			kvcache.Rotate(dst, hd)
		}
	}
}

// running is the merged softmax state of rows: maxima, sums and
// accumulated values so far.
type running struct {
	mx  []float32
	sum []float64
	acc []float32
}

// merge folds a chunk's partial into row r.
func (rs *running) merge(r, hd int, mx float32, sum float64, acc []float32) {
	if math.IsInf(float64(mx), -1) {
		return // the row sees none of the chunk
	}
	old := rs.mx[r]
	m := max(old, mx)
	ca, cb := expNeg(old-m), expNeg(mx-m)
	dst := rs.acc[r*hd : (r+1)*hd]
	for i, v := range acc {
		dst[i] = dst[i]*ca + v*cb
	}
	rs.sum[r] = rs.sum[r]*float64(ca) + sum*float64(cb)
	rs.mx[r] = m
}

// attnWorker is a worker's scratch, recycled so that a decode step
// allocates nothing per layer.
type attnWorker struct {
	q      []kvcache.Query
	acc    []float32
	scores []float32 // rows × PageSize
	ns     []int     // keys of the chunk each row sees
	run    running
	block  kvcache.Block
}

func (w *attnWorker) grow(rows, hd int) {
	if len(w.q) < rows {
		w.q = make([]kvcache.Query, rows)
	}
	growTo(&w.acc, rows*hd)
	growTo(&w.scores, rows*kvcache.PageSize)
	growTo(&w.ns, rows)
}

// running returns the worker's merge state for rows, reset.
func (w *attnWorker) running(rows, hd int) *running {
	rs := &w.run
	growTo(&rs.mx, rows)
	growTo(&rs.sum, rows)
	clear(growTo(&rs.acc, rows*hd))
	for r := range rows {
		rs.mx[r] = float32(math.Inf(-1))
		rs.sum[r] = 0
	}
	return rs
}

var workerPool = sync.Pool{New: func() any { return new(attnWorker) }}

// partials holds the chunk partials of split sequences, and the prepared
// queries of a call: sequence si's row t·Heads+h at qs[qbase[si]+t·Heads+h].
type partials struct {
	mx    []float32
	sum   []float64
	acc   []float32
	qs    []kvcache.Query
	qbase []int
}

func (p *partials) grow(n, hd int) {
	growTo(&p.mx, n)
	growTo(&p.sum, n)
	growTo(&p.acc, n*hd)
}

var partialsPool = sync.Pool{New: func() any { return new(partials) }}

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
