package kvcache

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"trit/quant"
)

// row returns the deterministic key (or, with v, value) row of a position,
// so a test can check any stored position without keeping copies.
func row(pos, dim int, v bool) []float32 {
	r := make([]float32, dim)
	for i := range r {
		r[i] = float32((pos*31+i*7)%97) / 97
		if v {
			r[i] = -r[i]
		}
	}
	return r
}

// put grows c to n positions, storing rows for the new ones in every layer.
func put(t *testing.T, c *Cache, n int) {
	t.Helper()
	if err := c.Reserve(n); err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	dim := cfg.KVHeads * cfg.HeadDim
	for l := range cfg.Layers {
		for p := c.Len(); p < n; p++ {
			c.Store(l, p, row(p+l, dim, false), row(p+l, dim, true))
		}
	}
	c.Advance(n)
}

// check verifies that c holds the rows put stored, for positions [0, n).
func check(t *testing.T, c *Cache, n int) {
	t.Helper()
	cfg := c.Config()
	hd := cfg.HeadDim
	got := make([]float32, hd)
	for l := range cfg.Layers {
		for p := range n {
			want := row(p+l, cfg.KVHeads*hd, false)
			for h := range cfg.KVHeads {
				c.KeyRow(l, h, p, got)
				if !slices.Equal(got, want[h*hd:(h+1)*hd]) {
					t.Fatalf("layer %d position %d head %d: key %v, want %v", l, p, h, got[:4], want[h*hd:h*hd+4])
				}
			}
		}
	}
}

func testConfig(b *Budget) Config {
	return Config{Layers: 2, KVHeads: 2, HeadDim: 32, K: quant.F32, V: quant.F16, Budget: b}
}

// TestPages grows a cache across page boundaries, truncates it back into a
// page and grows it again, checking the contents and the bytes held.
func TestPages(t *testing.T) {
	c, err := New(testConfig(nil), 3*PageSize)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(c.Config().pageBytes()) * 2 // two layers
	if c.Bytes() != 0 {
		t.Errorf("empty cache holds %d bytes", c.Bytes())
	}
	for _, n := range []int{1, PageSize - 1, PageSize, PageSize + 1, 2*PageSize + 5} {
		put(t, c, n)
		check(t, c, n)
		if want := int64((n+PageSize-1)/PageSize) * page; c.Bytes() != want {
			t.Errorf("%d positions: %d bytes, want %d", n, c.Bytes(), want)
		}
	}
	c.Truncate(PageSize)
	if c.Len() != PageSize || c.Bytes() != page {
		t.Errorf("truncated to a page: %d positions, %d bytes", c.Len(), c.Bytes())
	}
	put(t, c, PageSize+3)
	check(t, c, PageSize+3)
	if err := c.Reserve(3*PageSize + 1); !errors.Is(err, ErrFull) {
		t.Errorf("growing past the limit: %v, want ErrFull", err)
	}
}

// TestFork checks copy-on-write: a fork shares every page, and either side
// writing after a truncation into a shared page leaves the other intact.
func TestFork(t *testing.T) {
	b := NewBudget(0)
	c, err := New(testConfig(b), 4*PageSize)
	if err != nil {
		t.Fatal(err)
	}
	put(t, c, PageSize+10)
	before := b.Used()
	f := c.Fork()
	if b.Used() != before {
		t.Errorf("fork took %d bytes, want none", b.Used()-before)
	}
	// The fork rewinds into page 1 and writes other rows there.
	f.Truncate(PageSize + 4)
	if err := f.Reserve(PageSize + 8); err != nil {
		t.Fatal(err)
	}
	dim := 64
	for l := range 2 {
		for p := PageSize + 4; p < PageSize+8; p++ {
			f.Store(l, p, make([]float32, dim), make([]float32, dim))
		}
	}
	f.Advance(PageSize + 8)
	check(t, c, PageSize+10) // the original is untouched
	if got := b.Used() - before; got != int64(c.Config().pageBytes())*2 {
		t.Errorf("copy-on-write took %d bytes, want one page per layer", got)
	}
	c.Free()
	f.Free()
	if b.Used() != 0 {
		t.Errorf("%d bytes held after freeing both", b.Used())
	}
}

// TestBudget runs a shared budget out: growth fails with ErrBudget, and
// succeeds again once another sequence releases its pages.
func TestBudget(t *testing.T) {
	cfg := testConfig(nil)
	per := int64(cfg.pageBytes()) * 2
	b := NewBudget(3 * per)
	cfg.Budget = b
	c1, _ := New(cfg, 10*PageSize)
	c2, _ := New(cfg, 10*PageSize)
	put(t, c1, 2*PageSize)
	put(t, c2, PageSize)
	if err := c2.Reserve(PageSize + 1); !errors.Is(err, ErrBudget) {
		t.Fatalf("over budget: %v, want ErrBudget", err)
	}
	c1.Truncate(0)
	put(t, c2, 2*PageSize+1)
	check(t, c2, 2*PageSize+1)
	if b.Used() > b.Limit() {
		t.Errorf("budget used %d of %d", b.Used(), b.Limit())
	}
}

// TestQuantizedRoundTrip stores rows in every type and checks the decoded
// values against the format's error: exact for f32, fp16 rounding for f16,
// half a quantization step (amax/254) plus the fp16 rounding of the scale
// (amax/1024) for q8_0, a step (amax/8, the clamped extreme) for q4_0.
func TestQuantizedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range Types {
		for _, rot := range []bool{false, true} {
			cfg := Config{Layers: 1, KVHeads: 1, HeadDim: 128, K: f, V: f, Rotate: rot}
			c, err := New(cfg, 4)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Reserve(1); err != nil {
				t.Fatal(err)
			}
			x := make([]float32, 128)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			k := slices.Clone(x)
			c.Store(0, 0, k, slices.Clone(x))
			got := make([]float32, 128)
			c.KeyRow(0, 0, 0, got)
			want := slices.Clone(x)
			if rot && Quantized(f) {
				Rotate(want, 128)
			}
			for b := 0; b < 128; b += 32 {
				var amax float64
				for _, v := range want[b : b+32] {
					amax = max(amax, float64(abs(v)))
				}
				bound := map[*quant.Format]float64{quant.F32: 0, quant.F16: amax / 1024, quant.Q8_0: amax/254 + amax/1024, quant.Q4_0: amax / 8 * 1.01}[f]
				for i := b; i < b+32; i++ {
					if d := float64(abs(got[i] - want[i])); d > bound {
						t.Fatalf("%v rot=%v: element %d is %g, want %g (bound %g)", f, rot, i, got[i], want[i], bound)
					}
				}
			}
		}
	}
}

func abs(x float32) float32 { return max(x, -x) }

func TestParseType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *quant.Format
	}{{"", quant.F16}, {"f32", quant.F32}, {"F16", quant.F16}, {"q8_0", quant.Q8_0}, {"q4_0", quant.Q4_0}} {
		if got, err := ParseType(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseType(%q) = %v, %v", tc.in, got, err)
		}
	}
	if _, err := ParseType("q4_1"); err == nil {
		t.Error("ParseType accepted q4_1")
	}
	if _, err := New(Config{Layers: 1, KVHeads: 1, HeadDim: 48, K: quant.Q8_0}, 1); err == nil {
		t.Error("New accepted a head dim that is not a multiple of the block")
	}
}
