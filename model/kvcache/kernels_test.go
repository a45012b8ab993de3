package kvcache

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"trit/quant"
)

// withSIMD runs f with the assembly kernels on and off (where the build
// and CPU have them), naming the tier.
func withSIMD(t *testing.T, f func(t *testing.T, on bool)) {
	tiers := []bool{false}
	if simd {
		tiers = append(tiers, true)
	}
	for _, on := range tiers {
		t.Run(fmt.Sprintf("simd=%v", on), func(t *testing.T) {
			if !on && simd {
				setSIMD(false)
				defer setSIMD(true)
			}
			f(t, on)
		})
	}
}

// TestKernels compares the scores and accumulate kernels of every tier
// with a float64 reference on the decoded rows: quantized dots must be
// exact up to the final float sums (the integer block dots are exact),
// float ones within float32 rounding of the sums, 1e-5 relative to Σ|terms|.
func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	withSIMD(t, func(t *testing.T, _ bool) {
		for _, f := range Types {
			for _, hd := range []int{32, 64, 128, 256} {
				for _, n := range []int{1, 2, 3, 7, 64, 255} {
					cfg := Config{Layers: 1, KVHeads: 1, HeadDim: hd, K: f, V: f}
					c, err := New(cfg, n)
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Reserve(n); err != nil {
						t.Fatal(err)
					}
					x := make([]float32, hd)
					for p := range n {
						for i := range x {
							x[i] = float32(rng.NormFloat64())
						}
						c.Store(0, p, x, x)
					}

					for i := range x {
						x[i] = float32(rng.NormFloat64())
					}
					var q Query
					q.Prepare(f, x)
					qf := x
					if Quantized(f) {
						qf = make([]float32, hd)
						quant.Q8_0.Decode(qf, q.Q8)
					}
					rows := make([]float32, n*hd)
					for j := range n {
						c.KeyRow(0, 0, j, rows[j*hd:(j+1)*hd])
					}
					var b Block
					c.Open(&b, 0, 0, 0, n, 1+n%9) // n%9 ≥ 7: converted once
					got := make([]float32, n)
					b.Scores(got, &q)
					p := make([]float32, n)
					for j := range n {
						var d, mag float64
						for i := range hd {
							d += float64(qf[i]) * float64(rows[j*hd+i])
							mag += math.Abs(float64(qf[i]) * float64(rows[j*hd+i]))
						}
						if e := math.Abs(float64(got[j]) - d); e > 1e-5*mag {
							t.Fatalf("%v hd %d n %d: score %d is %g, want %g", f, hd, n, j, got[j], d)
						}
						p[j] = float32(rng.Float64())
					}
					acc := make([]float32, hd)
					b.Accumulate(acc, p)
					for i := range hd {
						var s, mag float64
						for j := range n {
							s += float64(p[j]) * float64(rows[j*hd+i])
							mag += math.Abs(float64(p[j]) * float64(rows[j*hd+i]))
						}
						if e := math.Abs(float64(acc[i]) - s); e > 1e-5*mag {
							t.Fatalf("%v hd %d n %d: accumulated column %d is %g, want %g", f, hd, n, i, acc[i], s)
						}
					}
				}
			}
		}
	})
}

// TestQuantizedDotsTwin checks that the SIMD integer-dot kernels equal
// their Go twins bit for bit.
func TestQuantizedDotsTwin(t *testing.T) {
	if !simd {
		t.Skip("no SIMD kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, f := range []*quant.Format{quant.Q8_0, quant.Q4_0} {
		for _, hd := range []int{64, 128, 256} {
			const n = 33
			row := make([]float32, hd)
			k := make([]byte, n*hd/32*f.BlockBytes)
			for j := range n {
				for i := range row {
					row[i] = float32(rng.NormFloat64() * 3)
				}
				encode(f, k[j*hd/32*f.BlockBytes:(j+1)*hd/32*f.BlockBytes], row)
			}
			var q Query
			q.Prepare(f, row)
			got, want := make([]float32, n), make([]float32, n)
			if f == quant.Q8_0 {
				dotsQ8(got, &q, k, hd/32)
				dotsQ8Go(want, q.Q8, k, hd/32)
			} else {
				dotsQ4(got, &q, k, hd/32)
				dotsQ4Go(want, q.Q8, k, hd/32)
			}
			for j := range n {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%v hd %d: key %d: SIMD %g, Go %g", f, hd, j, got[j], want[j])
				}
			}
		}
	}
}

func TestMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 1; n < 300; n += 7 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		if got, want := Max(x), maxGo(x); got != want {
			t.Fatalf("Max of %d values = %g, want %g", n, got, want)
		}
	}
}

// TestScoresRows checks that scoring several rows together (four per pass
// on float keys converted for many rows) gives every score bit for bit as
// scoring each row alone.
func TestScoresRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	withSIMD(t, func(t *testing.T, _ bool) {
		for _, f := range Types {
			const hd = 128
			cfg := Config{Layers: 1, KVHeads: 1, HeadDim: hd, K: f, V: f}
			c, _ := New(cfg, PageSize)
			c.Reserve(PageSize)
			x := make([]float32, hd)
			for p := range PageSize {
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				c.Store(0, p, x, x)
			}
			for _, rows := range []int{1, 3, 4, 9, 16} {
				qs := make([]Query, rows)
				ns := make([]int, rows)
				for r := range qs {
					q := make([]float32, hd)
					for i := range q {
						q[i] = float32(rng.NormFloat64())
					}
					qs[r].Prepare(f, q)
					ns[r] = rng.IntN(PageSize + 1)
				}
				var all, one Block
				c.Open(&all, 0, 0, 0, PageSize, rows)
				got := make([]float32, rows*PageSize)
				all.ScoresRows(got, qs, ns)
				c.Open(&one, 0, 0, 0, PageSize, 1)
				for r := range rows {
					want := make([]float32, ns[r])
					one.Scores(want, &qs[r])
					for j, w := range want {
						if g := got[r*PageSize+j]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%v, %d rows: row %d key %d: %g together, %g alone", f, rows, r, j, g, w)
						}
					}
				}
			}
		}
	})
}
