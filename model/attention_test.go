package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/kernels"
)

// naiveAttend is the reference: per query, explicit float64 softmax over
// every position it may see.
func naiveAttend(a *Attention, out, q, k, v []float32, nTok, pos0 int) {
	hd, kvDim := a.HeadDim, a.KVHeads*a.HeadDim
	group := a.Heads / a.KVHeads
	for t := range nTok {
		for h := range a.Heads {
			g := h / group
			qv := q[(t*a.Heads+h)*hd:]
			n := pos0 + t + 1
			s := make([]float64, n)
			m := math.Inf(-1)
			for p := range n {
				var d float64
				for i := range hd {
					d += float64(qv[i]) * float64(k[p*kvDim+g*hd+i])
				}
				s[p] = d * float64(a.Scale)
				m = max(m, s[p])
			}
			var sum float64
			for p := range s {
				s[p] = math.Exp(s[p] - m)
				sum += s[p]
			}
			o := out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
			for i := range hd {
				var acc float64
				for p := range s {
					acc += s[p] * float64(v[p*kvDim+g*hd+i])
				}
				o[i] = float32(acc / sum)
			}
		}
	}
}

// TestAttend compares the tiled online-softmax attention with the naive
// reference, for float32 and fp16 caches, across tile boundaries and with
// a cache already holding earlier positions. The shapes include work items
// of 1 to 128 query rows, counts off the kernels' 4-row and 16-column
// tiles, GQA groups of 1 to 8 and head dimensions 8 to 256.
func TestAttend(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(4, 5))
	for _, tc := range []struct{ heads, kvHeads, hd, nt, pos0 int }{
		{4, 2, 16, 1, 0},
		{4, 2, 16, 1, 130},
		{4, 2, 16, 37, 0},
		{8, 2, 32, 70, 100},
		{3, 3, 8, 16, 64},
		{16, 8, 128, 40, 0},
		{16, 8, 128, 1, 300},
		{16, 8, 128, 3, 190},
		{8, 1, 64, 20, 70},
		{6, 2, 64, 3, 50},
		{4, 4, 256, 5, 10},
		{2, 2, 256, 24, 3},
		{5, 5, 16, 1, 200},
	} {
		a := &Attention{Heads: tc.heads, KVHeads: tc.kvHeads, HeadDim: tc.hd, Scale: DefaultScale(tc.hd)}
		n := tc.pos0 + tc.nt
		dim := tc.kvHeads * tc.hd
		k := make([]float32, n*dim)
		v := make([]float32, n*dim)
		for i := range k {
			k[i] = float32(rng.NormFloat64() * 2)
			v[i] = float32(rng.NormFloat64())
		}
		q := make([]float32, tc.nt*tc.heads*tc.hd)
		for i := range q {
			q[i] = float32(rng.NormFloat64() * 2)
		}
		want := make([]float32, len(q))
		naiveAttend(a, want, q, k, v, tc.nt, tc.pos0)
		for _, typ := range []string{KVF32, KVF16} {
			caches, err := NewKV(1, n, dim, typ)
			if err != nil {
				t.Fatal(err)
			}
			kv := &caches[0]
			for p := range n {
				kv.Store(p, k[p*dim:(p+1)*dim], v[p*dim:(p+1)*dim])
			}
			got := make([]float32, len(q))
			a.Attend(pool, got, q, kv, tc.nt, tc.pos0)
			var d float64
			for i := range want {
				d = max(d, math.Abs(float64(want[i]-got[i])))
			}
			// fp16 keeps 11 significant bits: the inputs' rounding bounds it.
			bound := 1e-5
			if typ == KVF16 {
				bound = 2e-2
			}
			if d > bound {
				t.Errorf("%+v %s: attention differs from the reference by %g", tc, typ, d)
			}
			c := kv.Clone()
			if c.Bytes() != kv.Bytes() || c.Bytes() == 0 {
				t.Errorf("clone holds %d bytes, cache %d", c.Bytes(), kv.Bytes())
			}
		}
	}
	if _, err := NewKV(1, 1, 1, "q4"); err == nil {
		t.Error("NewKV accepted an unknown cache type")
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

func BenchmarkAttendPrefill(b *testing.B) {
	pool := kernels.NewPool(0)
	defer pool.Close()
	const heads, hd, nt, pos0 = 4, 64, 512, 8192
	a := &Attention{Heads: heads, KVHeads: 1, HeadDim: hd, Scale: DefaultScale(hd)}
	for _, typ := range []string{KVF32, KVF16} {
		b.Run(typ, func(b *testing.B) {
			caches, _ := NewKV(1, pos0+nt, hd, typ)
			kv := &caches[0]
			rng := rand.New(rand.NewPCG(1, 1))
			row := make([]float32, hd)
			for p := range pos0 + nt {
				for i := range row {
					row[i] = float32(rng.NormFloat64())
				}
				kv.Store(p, row, row)
			}
			q := make([]float32, nt*heads*hd)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			out := make([]float32, len(q))
			for b.Loop() {
				a.Attend(pool, out, q, kv, nt, pos0)
			}
		})
	}
}

// BenchmarkAttend times one layer of the bonsai-1.7b shape (16 query heads,
// 8 KV heads, head dimension 128) on one thread: a 512-token prefill from
// position 0 and one decoded token at position 4096.
func BenchmarkAttend(b *testing.B) {
	pool := kernels.NewPool(1)
	defer pool.Close()
	const heads, kvHeads, hd = 16, 8, 128
	a := &Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: DefaultScale(hd)}
	for _, bc := range []struct {
		name      string
		nTok, pos int
	}{{"prefill512", 512, 0}, {"decode4096", 1, 4096}} {
		for _, typ := range []string{KVF32, KVF16} {
			b.Run(bc.name+"/"+typ, func(b *testing.B) {
				n := bc.pos + bc.nTok
				caches, _ := NewKV(1, n, kvHeads*hd, typ)
				kv := &caches[0]
				rng := rand.New(rand.NewPCG(1, 1))
				row := make([]float32, kvHeads*hd)
				for p := range n {
					for i := range row {
						row[i] = float32(rng.NormFloat64())
					}
					kv.Store(p, row, row)
				}
				q := make([]float32, bc.nTok*heads*hd)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				out := make([]float32, len(q))
				for b.Loop() {
					a.Attend(pool, out, q, kv, bc.nTok, bc.pos)
				}
			})
		}
	}
}
