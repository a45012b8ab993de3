package ops

import (
	"errors"
	"fmt"
	"math"
)

// ErrRopeConfig is wrapped by every error NewRope returns.
var ErrRopeConfig = errors.New("ops: invalid RoPE configuration")

// RopeScaling selects how RoPE stretches positions beyond the trained context.
type RopeScaling int

const (
	// RopeScalingNone is plain RoPE.
	RopeScalingNone RopeScaling = iota
	// RopeScalingLinear divides every angle by Factor (position interpolation).
	RopeScalingLinear
	// RopeScalingYaRN is YaRN as llama.cpp computes it: angles of high
	// frequency pairs are kept (extrapolated), those of low frequency pairs
	// are divided by Factor (interpolated), with a linear ramp between the
	// correction dims derived from BetaFast, BetaSlow and OrigCtx; cos and
	// sin are scaled by AttnFactor·(1 + 0.1·ln Factor).
	RopeScalingYaRN
)

// String returns the GGUF spelling of s ("none", "linear", "yarn").
func (s RopeScaling) String() string {
	switch s {
	case RopeScalingNone:
		return "none"
	case RopeScalingLinear:
		return "linear"
	case RopeScalingYaRN:
		return "yarn"
	}
	return fmt.Sprintf("RopeScaling(%d)", int(s))
}

// RopeConfig describes a rotary position embedding. The zero values of the
// optional fields select llama.cpp's defaults.
type RopeConfig struct {
	HeadDim int     // elements per head
	Dims    int     // rotated elements at the start of each head (even); 0 means HeadDim
	Base    float64 // frequency base θ (rope.freq_base), > 1
	// Neox selects the pairing: true rotates (i, i+Dims/2), the "NEOX" or
	// rotate_half style of Qwen and GPT-NeoX; false rotates adjacent pairs
	// (2i, 2i+1), the style of llama2.c and llama.cpp's LLAMA_ROPE_TYPE_NORM.
	Neox    bool
	Scaling RopeScaling
	Factor  float64 // rope.scaling.factor, > 0; linear and YaRN only
	OrigCtx int     // rope.scaling.original_context_length; YaRN only

	// YaRN only. BetaFast and BetaSlow default to 32 and 1, ExtFactor
	// (the weight of the extrapolation ramp) to 1; a YaRN without the
	// ramp is RopeScalingLinear.
	BetaFast, BetaSlow, ExtFactor float64
	// AttnFactor multiplies cos and sin; 0 means 1. For YaRN the factor
	// 1 + 0.1·ln Factor is applied on top of it, as ggml does, so the
	// default reproduces Hugging Face's attention_factor. To match llama.cpp
	// set it from rope.scaling.attn_factor (default 1): llama.cpp folds the
	// YaRN factor into its attn_factor and then cancels it against ggml's,
	// which nets out to the same magnitude.
	AttnFactor float64
}

// maxRopeDims bounds Dims so that a hostile model file cannot make Apply
// allocate without limit; real models rotate at most a few hundred dims.
const maxRopeDims = 1 << 16

// stackTable is the largest table Apply keeps on the stack.
const stackTable = 512

// Rope applies a rotary position embedding. It is immutable after NewRope
// and safe for concurrent use.
type Rope struct {
	headDim, dims int
	neox          bool
	thetaScale    float32   // base^(-2/dims): ratio of successive pair frequencies
	freqScale     float32   // 1/Factor, or 1
	rampMix       []float32 // per pair: weight of the extrapolated angle (YaRN), nil otherwise
	mscale        float32   // magnitude of cos and sin
}

// NewRope validates cfg and returns the Rope it describes.
func NewRope(cfg RopeConfig) (*Rope, error) {
	bad := func(format string, args ...any) (*Rope, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrRopeConfig}, args...)...)
	}
	dims := cfg.Dims
	if dims == 0 {
		dims = cfg.HeadDim
	}
	switch {
	case cfg.HeadDim <= 0:
		return bad("head dim %d", cfg.HeadDim)
	case dims < 0 || dims > cfg.HeadDim:
		return bad("rotary dims %d for head dim %d", cfg.Dims, cfg.HeadDim)
	case dims%2 != 0:
		return bad("rotary dims %d is odd", dims)
	case dims > maxRopeDims:
		return bad("rotary dims %d exceeds %d", dims, maxRopeDims)
	case !(cfg.Base > 1) || !finite32(cfg.Base):
		return bad("frequency base %g", cfg.Base)
	}
	r := &Rope{
		headDim:    cfg.HeadDim,
		dims:       dims,
		neox:       cfg.Neox,
		thetaScale: float32(math.Pow(float64(float32(cfg.Base)), float64(float32(-2/float64(dims))))),
		freqScale:  1,
		mscale:     1,
	}
	if cfg.AttnFactor != 0 {
		if !(cfg.AttnFactor > 0) || !finite32(cfg.AttnFactor) || float32(cfg.AttnFactor) == 0 {
			return bad("attention factor %g", cfg.AttnFactor)
		}
		r.mscale = float32(cfg.AttnFactor)
	}
	switch cfg.Scaling {
	case RopeScalingNone:
		return r, nil
	case RopeScalingLinear, RopeScalingYaRN:
	default:
		return bad("scaling %v", cfg.Scaling)
	}
	r.freqScale = float32(1 / cfg.Factor)
	if !(cfg.Factor > 0) || !finite32(cfg.Factor) || !finite32(1/cfg.Factor) || r.freqScale == 0 {
		return bad("scaling factor %g", cfg.Factor)
	}
	if cfg.Scaling == RopeScalingLinear {
		return r, nil
	}

	betaFast, betaSlow, ext := cfg.BetaFast, cfg.BetaSlow, cfg.ExtFactor
	if betaFast == 0 {
		betaFast = 32
	}
	if betaSlow == 0 {
		betaSlow = 1
	}
	if ext == 0 {
		ext = 1
	}
	switch {
	case cfg.OrigCtx <= 0:
		return bad("YaRN original context %d", cfg.OrigCtx)
	case !(betaFast > 0) || !(betaSlow > 0) || !finite32(betaFast) || !finite32(betaSlow):
		return bad("YaRN betas %g, %g", betaFast, betaSlow)
	case !(ext > 0) || !finite32(ext):
		return bad("YaRN extrapolation factor %g", ext)
	}
	low, high := yarnCorrDims(dims, cfg.OrigCtx, float32(cfg.Base), float32(betaFast), float32(betaSlow))
	r.rampMix = make([]float32, dims/2)
	for i := range r.rampMix {
		r.rampMix[i] = yarnRamp(low, high, i) * float32(ext)
	}
	r.mscale *= 1 + 0.1*logf(1/r.freqScale)
	return r, nil
}

// yarnCorrDims returns the first and last pair index of the YaRN ramp, as
// ggml_rope_yarn_corr_dims computes them (in float32): the pair that turns
// betaFast times over the original context, floored and clamped to ≥ 0,
// and the pair that turns betaSlow times, ceiled and clamped to ≤ dims-1.
func yarnCorrDims(dims, origCtx int, base, betaFast, betaSlow float32) (low, high float32) {
	corr := func(rotations float32) float32 {
		return float32(dims) * logf(float32(origCtx)/(rotations*2*math.Pi)) / (2 * logf(base))
	}
	low = float32(math.Floor(float64(corr(betaFast))))
	high = float32(math.Ceil(float64(corr(betaSlow))))
	return max(0, low), min(float32(dims-1), high)
}

// yarnRamp is ggml's rope_yarn_ramp: 1 for pairs below low (keep the
// original angle), 0 above high (interpolate fully), linear in between.
func yarnRamp(low, high float32, pair int) float32 {
	y := (float32(pair) - low) / max(0.001, high-low)
	return 1 - min(1, max(0, y))
}

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// finite32 reports whether x stays finite as a float32.
func finite32(x float64) bool { return !math.IsInf(float64(float32(x)), 0) && x == x }

// HeadDim returns the number of elements per head.
func (r *Rope) HeadDim() int { return r.headDim }

// Dims returns the number of rotated elements at the start of each head.
func (r *Rope) Dims() int { return r.dims }

// TableLen returns the length of a position table: Dims.
func (r *Rope) TableLen() int { return r.dims }

// Table returns the table of position pos: the cosines of the Dims/2
// rotation angles followed by their sines, already scaled by the magnitude
// factor. It is stored in buf when cap(buf) ≥ TableLen and in a new slice
// otherwise. A table depends only on the position, so a forward pass
// computes it once per token and applies it in every layer with ApplyTable.
//
// The angles are formed as ggml forms them, in float32: pos times
// base^(-2/Dims) raised by repeated multiplication, then mixed by the YaRN
// ramp; cos and sin are then evaluated exactly and rounded.
func (r *Rope) Table(pos int, buf []float32) []float32 {
	if cap(buf) < r.dims {
		buf = make([]float32, r.dims)
	}
	half := r.dims / 2
	cos, sin := buf[:half], buf[half:r.dims]
	theta := float32(pos)
	for i := range cos {
		th := r.freqScale * theta
		if r.rampMix != nil {
			mix := r.rampMix[i]
			th = th*(1-mix) + theta*mix
		}
		s, c := math.Sincos(float64(th))
		cos[i] = float32(c) * r.mscale
		sin[i] = float32(s) * r.mscale
		theta *= r.thetaScale
	}
	return buf[:r.dims]
}

// Apply rotates the first Dims elements of each of the nHeads consecutive
// heads in x[:nHeads*HeadDim] for position pos; the other elements are left
// as they are. It panics if x is shorter than nHeads*HeadDim.
func (r *Rope) Apply(x []float32, nHeads, pos int) {
	var stack [stackTable]float32
	r.ApplyTable(x, nHeads, r.Table(pos, stack[:0]))
}

// ApplyTable is Apply with a table computed by Table. It panics if t is
// shorter than TableLen or x shorter than nHeads*HeadDim.
func (r *Rope) ApplyTable(x []float32, nHeads int, t []float32) {
	if len(t) < r.dims {
		panic("ops: Rope.ApplyTable: table too short")
	}
	if nHeads < 0 || len(x)/r.headDim < nHeads {
		panic("ops: Rope.ApplyTable: x shorter than nHeads heads")
	}
	half := r.dims / 2
	cos, sin := t[:half], t[half:r.dims]
	for h := range nHeads {
		head := x[h*r.headDim : h*r.headDim+r.dims]
		if r.neox {
			lo, hi := head[:half], head[half:]
			hi = hi[:len(lo)]
			for i, c := range cos {
				s := sin[i]
				x0, x1 := lo[i], hi[i]
				lo[i] = x0*c - x1*s
				hi[i] = x0*s + x1*c
			}
			continue
		}
		for i, c := range cos {
			s := sin[i]
			x0, x1 := head[2*i], head[2*i+1]
			head[2*i] = x0*c - x1*s
			head[2*i+1] = x0*s + x1*c
		}
	}
}
