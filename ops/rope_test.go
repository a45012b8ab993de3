package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func mustRope(t testing.TB, cfg RopeConfig) *Rope {
	t.Helper()
	r, err := NewRope(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ropeRef is the reference twin of Rope: it follows Hugging Face's
// formulation (inverse frequencies mixed by the YaRN ramp, attention factor
// 0.1·ln f + 1) in float64, independently of ggml's float32 angle recurrence.
func ropeRef(cfg RopeConfig, x []float64, nHeads, pos int) {
	dims := cfg.Dims
	if dims == 0 {
		dims = cfg.HeadDim
	}
	half := dims / 2
	inv := make([]float64, half)
	for i := range inv {
		inv[i] = math.Pow(cfg.Base, -2*float64(i)/float64(dims))
	}
	mscale := 1.0
	if cfg.AttnFactor != 0 {
		mscale = cfg.AttnFactor
	}
	switch cfg.Scaling {
	case RopeScalingLinear:
		for i := range inv {
			inv[i] /= cfg.Factor
		}
	case RopeScalingYaRN:
		fast, slow := cfg.BetaFast, cfg.BetaSlow
		if fast == 0 {
			fast = 32
		}
		if slow == 0 {
			slow = 1
		}
		corr := func(n float64) float64 {
			return float64(dims) * math.Log(float64(cfg.OrigCtx)/(n*2*math.Pi)) / (2 * math.Log(cfg.Base))
		}
		low := math.Max(math.Floor(corr(fast)), 0)
		high := math.Min(math.Ceil(corr(slow)), float64(dims-1))
		if low == high {
			high += 0.001
		}
		for i := range inv {
			ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
			extrap := 1 - ramp // weight of the unscaled frequency
			inv[i] = inv[i]/cfg.Factor*(1-extrap) + inv[i]*extrap
		}
		mscale *= 0.1*math.Log(cfg.Factor) + 1
	}
	for h := range nHeads {
		head := x[h*cfg.HeadDim:]
		for i := range half {
			sin, cos := math.Sincos(float64(pos) * inv[i])
			cos, sin = cos*mscale, sin*mscale
			a, b := i, i+half
			if !cfg.Neox {
				a, b = 2*i, 2*i+1
			}
			x0, x1 := head[a], head[b]
			head[a] = x0*cos - x1*sin
			head[b] = x0*sin + x1*cos
		}
	}
}

func TestRopeMatchesReference(t *testing.T) {
	configs := []struct {
		name string
		cfg  RopeConfig
	}{
		{"llama2c normal", RopeConfig{HeadDim: 8, Base: 10000}},
		{"qwen3 neox", RopeConfig{HeadDim: 128, Base: 1e6, Neox: true}},
		{"qwen35 partial", RopeConfig{HeadDim: 256, Dims: 64, Base: 1e7, Neox: true}},
		{"partial normal", RopeConfig{HeadDim: 64, Dims: 16, Base: 10000}},
		{"linear", RopeConfig{HeadDim: 64, Base: 10000, Neox: true, Scaling: RopeScalingLinear, Factor: 2}},
		{"yarn test model", RopeConfig{HeadDim: 64, Base: 1e6, Neox: true, Scaling: RopeScalingYaRN, Factor: 4, OrigCtx: 64}},
		{"yarn bonsai 8B", RopeConfig{HeadDim: 128, Base: 1e6, Neox: true, Scaling: RopeScalingYaRN, Factor: 4, OrigCtx: 16384}},
		{"yarn partial attn", RopeConfig{HeadDim: 256, Dims: 64, Base: 1e7, Neox: true, Scaling: RopeScalingYaRN, Factor: 8, OrigCtx: 4096, AttnFactor: 0.9}},
		{"yarn normal betas", RopeConfig{HeadDim: 32, Base: 500, Scaling: RopeScalingYaRN, Factor: 3, OrigCtx: 512, BetaFast: 16, BetaSlow: 2}},
	}
	for i, c := range configs {
		cfg := c.cfg
		r := rand.New(rand.NewPCG(9, uint64(i)))
		t.Run(c.name, func(t *testing.T) {
			rope := mustRope(t, cfg)
			const nHeads = 3
			for _, pos := range []int{0, 1, 2, 7, 39, 100, 1000, 4095} {
				x := randVec(r, nHeads*cfg.HeadDim+5) // extra tail must stay untouched
				want := make([]float64, len(x))
				for i, v := range x {
					want[i] = float64(v)
				}
				ropeRef(cfg, want, nHeads, pos)
				orig := append([]float32(nil), x...)
				rope.Apply(x, nHeads, pos)
				// ggml's float32 angle recurrence drifts by up to a few
				// pos·1e-7 rad; the rest is rounding.
				tol := 1e-6 + 5e-7*float64(pos)
				for i := range x {
					if d := math.Abs(float64(x[i]) - want[i]); d > tol*(1+math.Abs(want[i])) {
						t.Fatalf("pos %d: x[%d] = %v, want %v", pos, i, x[i], want[i])
					}
					if i%cfg.HeadDim >= rope.Dims() || i >= nHeads*cfg.HeadDim {
						if x[i] != orig[i] {
							t.Fatalf("pos %d: unrotated x[%d] changed", pos, i)
						}
					}
				}
			}
		})
	}
}

func TestYaRNCorrDims(t *testing.T) {
	tests := []struct {
		dims, origCtx int
		base          float32
		low, high     float32
	}{
		// qwen3-yarn-f32 test model: corr(32) = -2.65 → 0, corr(1) = 5.38 → 6.
		{64, 64, 1e6, 0, 6},
		// Ternary Bonsai 8B: corr(32) = 20.39 → 20, corr(1) = 36.44 → 37.
		{128, 16384, 1e6, 20, 37},
		// A huge original context clamps high to dims-1: corr(32) = 53.8, corr(1) = 65.4.
		{64, 1 << 30, 1e4, 53, 63},
	}
	for _, tt := range tests {
		low, high := yarnCorrDims(tt.dims, tt.origCtx, tt.base, 32, 1)
		if low != tt.low || high != tt.high {
			t.Errorf("yarnCorrDims(%d, %d, %g) = %v, %v, want %v, %v", tt.dims, tt.origCtx, tt.base, low, high, tt.low, tt.high)
		}
	}
}

func TestYaRNMagnitude(t *testing.T) {
	rope := mustRope(t, RopeConfig{HeadDim: 64, Base: 1e6, Neox: true, Scaling: RopeScalingYaRN, Factor: 4, OrigCtx: 64})
	tab := rope.Table(0, nil)
	want := float32(1 + 0.1*math.Log(4)) // 1.1386294
	half := len(tab) / 2
	for i := range half {
		if math.Abs(float64(tab[i]-want)) > 1e-6 || tab[half+i] != 0 {
			t.Fatalf("pair %d at position 0: cos %v sin %v, want %v and 0", i, tab[i], tab[half+i], want)
		}
	}
}

func TestRopeTableReuse(t *testing.T) {
	rope := mustRope(t, RopeConfig{HeadDim: 128, Dims: 64, Base: 1e7, Neox: true})
	buf := make([]float32, 0, 64)
	tab := rope.Table(17, buf)
	if &tab[0] != &buf[:1][0] || len(tab) != rope.TableLen() {
		t.Fatal("Table did not use a buffer with enough capacity")
	}
	r := rand.New(rand.NewPCG(11, 12))
	x := randVec(r, 4*128)
	y := append([]float32(nil), x...)
	rope.ApplyTable(x, 4, tab)
	rope.Apply(y, 4, 17)
	for i := range x {
		if x[i] != y[i] {
			t.Fatalf("ApplyTable and Apply differ at %d", i)
		}
	}
	// Rotations preserve the norm of each rotated pair (no magnitude scaling here).
	z := randVec(r, 128)
	n0 := Dot(z[:64], z[:64])
	rope.Apply(z, 1, 12345)
	if n1 := Dot(z[:64], z[:64]); math.Abs(float64(n1-n0)) > 1e-4*float64(n0) {
		t.Fatalf("norm changed from %v to %v", n0, n1)
	}
}

func TestNewRopeErrors(t *testing.T) {
	ok := RopeConfig{HeadDim: 64, Base: 1e4, Scaling: RopeScalingYaRN, Factor: 4, OrigCtx: 4096}
	tests := map[string]func(c *RopeConfig){
		"zero head":      func(c *RopeConfig) { c.HeadDim = 0 },
		"negative dims":  func(c *RopeConfig) { c.Dims = -2 },
		"dims > head":    func(c *RopeConfig) { c.Dims = 66 },
		"odd dims":       func(c *RopeConfig) { c.Dims = 7 },
		"odd head":       func(c *RopeConfig) { c.HeadDim = 63 },
		"huge dims":      func(c *RopeConfig) { c.HeadDim, c.Dims = 1<<20, 1<<20 },
		"base 1":         func(c *RopeConfig) { c.Base = 1 },
		"base NaN":       func(c *RopeConfig) { c.Base = math.NaN() },
		"base Inf":       func(c *RopeConfig) { c.Base = math.Inf(1) },
		"unknown scale":  func(c *RopeConfig) { c.Scaling = 7 },
		"factor 0":       func(c *RopeConfig) { c.Factor = 0 },
		"factor NaN":     func(c *RopeConfig) { c.Factor = math.NaN() },
		"no orig ctx":    func(c *RopeConfig) { c.OrigCtx = 0 },
		"negative beta":  func(c *RopeConfig) { c.BetaFast = -1 },
		"negative ext":   func(c *RopeConfig) { c.ExtFactor = -1 },
		"negative attn":  func(c *RopeConfig) { c.AttnFactor = -1 },
		"infinite attn":  func(c *RopeConfig) { c.AttnFactor = math.Inf(1) },
		"infinite betas": func(c *RopeConfig) { c.BetaSlow = math.Inf(1) },
		"float32 base":   func(c *RopeConfig) { c.Base = 1e300 },
		"tiny factor":    func(c *RopeConfig) { c.Factor = 1e-300 },
		"huge factor":    func(c *RopeConfig) { c.Factor = 1e300 },
		"tiny attn":      func(c *RopeConfig) { c.AttnFactor = 1e-300 },
	}
	if _, err := NewRope(ok); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	for name, mutate := range tests {
		cfg := ok
		mutate(&cfg)
		if _, err := NewRope(cfg); !errors.Is(err, ErrRopeConfig) {
			t.Errorf("%s: err = %v, want ErrRopeConfig", name, err)
		}
	}
}

func TestRopeScalingString(t *testing.T) {
	for s, want := range map[RopeScaling]string{RopeScalingNone: "none", RopeScalingLinear: "linear", RopeScalingYaRN: "yarn", 9: "RopeScaling(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
	}
}

func FuzzNewRope(f *testing.F) {
	f.Add(128, 64, 1e6, true, 2, 4.0, 8192, 0.0, 0.0, 0.0, 0.0, 100)
	f.Add(8, 0, 1e4, false, 0, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0)
	f.Fuzz(func(t *testing.T, head, dims int, base float64, neox bool, scaling int, factor float64, orig int, bf, bs, ext, attn float64, pos int) {
		rope, err := NewRope(RopeConfig{HeadDim: head, Dims: dims, Base: base, Neox: neox, Scaling: RopeScaling(scaling),
			Factor: factor, OrigCtx: orig, BetaFast: bf, BetaSlow: bs, ExtFactor: ext, AttnFactor: attn})
		if err != nil {
			return
		}
		if head > 4096 {
			return // valid, but not worth rotating here
		}
		x := make([]float32, 2*head)
		rope.Apply(x, 2, pos)
	})
}
