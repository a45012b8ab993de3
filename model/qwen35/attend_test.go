package qwen35

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/kernels"
	"trit/model"
)

// TestAttendTiled compares the tiled prefill attention with
// model.Attention.Attend on random queries and caches, across tile
// boundaries and with a cache that already holds earlier positions.
func TestAttendTiled(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(4, 5))
	for _, tc := range []struct{ heads, kvHeads, hd, nt, pos0 int }{
		{4, 2, 16, 2, 0},
		{4, 2, 16, 37, 0},
		{8, 2, 32, 70, 100},
		{3, 3, 8, 16, 64},
	} {
		m := &Model{pool: pool, attn: model.Attention{Heads: tc.heads, KVHeads: tc.kvHeads, HeadDim: tc.hd, Scale: model.DefaultScale(tc.hd)}}
		n := tc.pos0 + tc.nt
		kv := model.NewKV(1, n, tc.kvHeads*tc.hd)[0]
		for i := range kv.K {
			kv.K[i] = float32(rng.NormFloat64() * 2)
			kv.V[i] = float32(rng.NormFloat64())
		}
		q := make([]float32, tc.nt*tc.heads*tc.hd)
		for i := range q {
			q[i] = float32(rng.NormFloat64() * 2)
		}
		want := make([]float32, len(q))
		got := make([]float32, len(q))
		m.attn.Attend(pool, want, q, &kv, tc.nt, tc.pos0)
		m.attendTiled(got, q, &kv, tc.nt, tc.pos0)
		var d float64
		for i := range want {
			d = max(d, math.Abs(float64(want[i]-got[i])))
		}
		if d > 1e-5 {
			t.Errorf("%+v: tiled attention differs by %g", tc, d)
		}
	}
}
