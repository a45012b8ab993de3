package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"trit/kernels"
	"trit/model/kvcache"
	"trit/quant"
)

// attnCase is one sequence of an attention test: nTok queries after pos0
// cached positions.
type attnCase struct{ pos0, nTok int }

// fill stores n random positions into a fresh cache of cfg and returns it.
func fill(t testing.TB, cfg kvcache.Config, n int, rng *rand.Rand) *kvcache.Cache {
	t.Helper()
	c, err := kvcache.New(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(n); err != nil {
		t.Fatal(err)
	}
	dim := cfg.KVHeads * cfg.HeadDim
	k, v := make([]float32, dim), make([]float32, dim)
	for p := range n {
		for i := range k {
			k[i] = float32(rng.NormFloat64() * 2)
			v[i] = float32(rng.NormFloat64())
		}
		c.Store(0, p, k, v)
	}
	c.Advance(n)
	return c
}

// naiveAttend is the reference: per query, an explicit float64 softmax over
// every position it may see, computed on the values the cache holds
// (decoded) and, for a quantized K, on the Q8_0-rounded query, so that only
// the kernels' float rounding separates it from Attend.
func naiveAttend(a *Attention, s *AttnSeq) []float32 {
	hd := a.HeadDim
	group := a.Heads / a.KVHeads
	cfg := s.Cache.Config()
	out := make([]float32, len(s.Q))
	krow, vrow := make([]float32, hd), make([]float32, hd)
	qf := make([]float32, hd)
	for t := range s.NTok {
		for h := range a.Heads {
			g := h / group
			q := s.Q[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
			copy(qf, q)
			if kvcache.Quantized(cfg.K) {
				var pq kvcache.Query
				pq.Prepare(cfg.K, q)
				if err := quant.Q8_0.Decode(qf, pq.Q8); err != nil {
					panic(err)
				}
			}
			n := s.Pos0 + t + 1
			sc := make([]float64, n)
			m := math.Inf(-1)
			for p := range n {
				s.Cache.KeyRow(0, g, p, krow)
				var d float64
				for i := range hd {
					d += float64(qf[i]) * float64(krow[i])
				}
				sc[p] = d * float64(a.Scale)
				m = max(m, sc[p])
			}
			var sum float64
			acc := make([]float64, hd)
			for p := range sc {
				w := math.Exp(sc[p] - m)
				sum += w
				s.Cache.ValueRow(0, g, p, vrow)
				for i := range hd {
					acc[i] += w * float64(vrow[i])
				}
			}
			o := out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
			for i := range hd {
				o[i] = float32(acc[i] / sum)
			}
			if cfg.Rotate && kvcache.Quantized(cfg.V) {
				kvcache.Rotate(o, hd)
			}
		}
	}
	return out
}

// TestAttend compares Attend with the reference for every cache type, at
// the positions around page boundaries, GQA ratios 1–8, head sizes 64–256,
// one to three sequences per call, split (≤ splitTokens queries) and
// unsplit sequences. The bound is float32 rounding: the scores and weighted
// sums are within a few hundred ulp of the float64 reference relative to
// the largest value, |v| ≤ 5 (normal samples), hence 1e-4.
func TestAttend(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(4, 5))
	type tc struct {
		heads, kvHeads, hd int
		seqs               []attnCase
	}
	cases := []tc{
		{8, 8, 64, []attnCase{{0, 1}}},
		{8, 4, 64, []attnCase{{254, 1}, {255, 1}, {256, 1}}},
		{8, 2, 128, []attnCase{{256, 3}, {10, 20}}},
		{8, 1, 128, []attnCase{{4096, 1}}},
		{16, 8, 128, []attnCase{{250, 40}}},
		{4, 4, 256, []attnCase{{0, 17}, {300, 2}}},
		{4, 1, 256, []attnCase{{511, 3}, {1, 1}, {257, 5}}},
	}
	if testing.Short() {
		cases[3].seqs = []attnCase{{1024, 1}}
	}
	for _, c := range cases {
		a := &Attention{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, Scale: DefaultScale(c.hd)}
		for _, typ := range [][2]*quant.Format{{quant.F32, quant.F32}, {quant.F16, quant.F16}, {quant.Q8_0, quant.Q8_0}, {quant.Q4_0, quant.Q4_0}, {quant.Q8_0, quant.Q4_0}} {
			for _, rot := range []bool{false, true} {
				if rot && !kvcache.Quantized(typ[0]) && !kvcache.Quantized(typ[1]) {
					continue
				}
				name := fmt.Sprintf("%dx%d/%d/%v/%v/rot=%v", c.heads, c.kvHeads, c.hd, typ[0], typ[1], rot)
				cfg := kvcache.Config{Layers: 1, KVHeads: c.kvHeads, HeadDim: c.hd, K: typ[0], V: typ[1], Rotate: rot}
				seqs := make([]AttnSeq, len(c.seqs))
				for i, sc := range c.seqs {
					cache := fill(t, cfg, sc.pos0+sc.nTok, rng)
					q := make([]float32, sc.nTok*c.heads*c.hd)
					for j := range q {
						q[j] = float32(rng.NormFloat64() * 2)
					}
					seqs[i] = AttnSeq{Cache: cache, Q: q, Out: make([]float32, len(q)), Pos0: sc.pos0, NTok: sc.nTok}
				}
				a.Attend(pool, 0, seqs)
				for i := range seqs {
					want := naiveAttend(a, &seqs[i])
					var d float64
					for j := range want {
						d = max(d, math.Abs(float64(want[j]-seqs[i].Out[j])))
					}
					if d > 1e-4 {
						t.Errorf("%s seq %+v: attention differs from the reference by %g", name, c.seqs[i], d)
					}
				}
			}
		}
	}
}

// TestAttendInvariant checks batch invariance: a query row's output is
// bit-identical computed alone (split over positions), as one of several
// tokens of a step (unsplit, in query tiles) and beside other sequences.
func TestAttendInvariant(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	const heads, kvHeads, hd, n = 8, 2, 128, 700
	a := &Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: DefaultScale(hd)}
	for _, typ := range []*quant.Format{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0} {
		cfg := kvcache.Config{Layers: 1, KVHeads: kvHeads, HeadDim: hd, K: typ, V: typ, Rotate: true}
		cache := fill(t, cfg, n, rng)
		other := fill(t, cfg, 300, rng)
		qd := heads * hd
		const nt = 40
		q := make([]float32, nt*qd)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		pos0 := n - nt
		// All nt tokens in one step.
		all := AttnSeq{Cache: cache, Q: q, Out: make([]float32, len(q)), Pos0: pos0, NTok: nt}
		a.Attend(pool, 0, []AttnSeq{all})
		for _, tok := range []int{0, 17, nt - 1} {
			for _, k := range []int{1, 2, 3} { // k tokens from tok on
				k = min(k, nt-tok)
				one := AttnSeq{Cache: cache, Q: q[tok*qd : (tok+k)*qd], Out: make([]float32, k*qd), Pos0: pos0 + tok, NTok: k}
				oq := make([]float32, 5*qd)
				for i := range oq {
					oq[i] = float32(rng.NormFloat64())
				}
				o := AttnSeq{Cache: other, Q: oq, Out: make([]float32, len(oq)), Pos0: 295, NTok: 5}
				a.Attend(pool, 0, []AttnSeq{o, one})
				for i, v := range one.Out {
					if w := all.Out[tok*qd+i]; math.Float32bits(v) != math.Float32bits(w) {
						t.Fatalf("%v: token %d (of a step of %d) differs from the 40-token step at %d: %g vs %g", typ, tok, k, i, v, w)
					}
				}
			}
		}
	}
}

func TestExpNeg(t *testing.T) {
	for i := range 10000 {
		x := float32(-100 + float64(i)*0.01)
		got := float64(expNeg(x))
		if x < -87 {
			if got != 0 {
				t.Fatalf("expNeg(%g) = %g, want 0", x, got)
			}
			continue
		}
		want := math.Exp(float64(x))
		if rel := math.Abs(got-want) / want; rel > 3e-7 {
			t.Fatalf("expNeg(%g) = %g, want %g (relative error %g)", x, got, want, rel)
		}
	}
	if expNeg(0) != 1 || expNeg(float32(math.Inf(-1))) != 0 {
		t.Error("expNeg(0) ≠ 1 or expNeg(−Inf) ≠ 0")
	}
}

// BenchmarkAttend times one layer of attention of the Bonsai 1.7B shape
// (16 query heads, 8 KV heads of 128) for one decoded token, or a 512-token
// prefill block, at a depth, per cache type.
func BenchmarkAttend(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) { benchAttend(b, threads) })
	}
}

func benchAttend(b *testing.B, threads int) {
	pool := kernels.NewPool(threads)
	defer pool.Close()
	const heads, kvHeads, hd = 16, 8, 128
	a := &Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: DefaultScale(hd)}
	for _, typ := range []*quant.Format{quant.F16, quant.Q8_0, quant.Q4_0} {
		for _, tc := range []struct{ depth, nTok int }{{4096, 1}, {4096, 512}} {
			b.Run(fmt.Sprintf("%v/d%d/n%d", typ, tc.depth, tc.nTok), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				cfg := kvcache.Config{Layers: 1, KVHeads: kvHeads, HeadDim: hd, K: typ, V: typ, Rotate: true}
				cache := fill(b, cfg, tc.depth+tc.nTok, rng)
				q := make([]float32, tc.nTok*heads*hd)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				s := []AttnSeq{{Cache: cache, Q: q, Out: make([]float32, len(q)), Pos0: tc.depth, NTok: tc.nTok}}
				b.SetBytes(int64(tc.depth+tc.nTok) * int64(kvHeads) * int64(cfg.RowBytes(typ)*2))
				b.ResetTimer()
				for range b.N {
					a.Attend(pool, 0, s)
				}
			})
		}
	}
}
