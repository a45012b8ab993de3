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

// BenchmarkAttendTiled measures the prefill attention of a 512-token batch
// after 8192 cached positions (4 query heads on one KV head of 64).
func BenchmarkAttendTiled(b *testing.B) {
	pool := kernels.NewPool(0)
	defer pool.Close()
	const heads, hd, nt, pos0 = 4, 64, 512, 8192
	m := &Model{pool: pool, attn: model.Attention{Heads: heads, KVHeads: 1, HeadDim: hd, Scale: model.DefaultScale(hd)}}
	kv := model.NewKV(1, pos0+nt, hd)[0]
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range kv.K {
		kv.K[i] = float32(rng.NormFloat64())
		kv.V[i] = float32(rng.NormFloat64())
	}
	q := make([]float32, nt*heads*hd)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	out := make([]float32, len(q))
	for b.Loop() {
		m.attendTiled(out, q, &kv, nt, pos0)
	}
}

func TestExpNeg(t *testing.T) {
	for x := float32(-100); x <= 0; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(expNeg(x))
		if x < -87 { // flushed to 0 near the bottom of the normal range
			if got != 0 {
				t.Fatalf("expNeg(%g) = %g, want 0", x, got)
			}
			continue
		}
		if rel := math.Abs(got-want) / want; rel > 3e-7 {
			t.Fatalf("expNeg(%g) = %g, want %g (relative error %g)", x, got, want, rel)
		}
	}
	if expNeg(0) != 1 {
		t.Errorf("expNeg(0) = %g", expNeg(0))
	}
	if expNeg(float32(math.Inf(-1))) != 0 {
		t.Error("expNeg(−Inf) ≠ 0")
	}
}
