package model

import (
	"fmt"

	"trit/ops"
)

// RopeScaling reads the `<arch>.rope.scaling.*` keys into rc: none, linear
// or YaRN (Ternary Bonsai v1 packs use YaRN with factor 4).
func RopeScaling(w *Weights, rc *ops.RopeConfig) error {
	typ := w.String("rope.scaling.type", "none")
	factor := w.Float("rope.scaling.factor", 0)
	if factor == 0 {
		// Older files carry only the linear factor.
		if f := w.Float("rope.scale_linear", 0); f != 0 {
			typ, factor = "linear", f
		}
	}
	switch typ {
	case "none", "":
		return nil
	case "linear", "yarn":
		if factor <= 0 {
			return fmt.Errorf("model: %s.rope.scaling.type %s with factor %g", w.Arch, typ, factor)
		}
	default:
		return fmt.Errorf("model: %s.rope.scaling.type %q is not supported (known: none, linear, yarn)", w.Arch, typ)
	}
	rc.Scaling = ops.RopeScalingLinear
	if typ == "yarn" {
		rc.Scaling = ops.RopeScalingYaRN
		rc.BetaFast = w.Float("rope.scaling.yarn_beta_fast", 0)
		rc.BetaSlow = w.Float("rope.scaling.yarn_beta_slow", 0)
		rc.ExtFactor = w.Float("rope.scaling.yarn_ext_factor", 0)
	}
	rc.AttnFactor = w.Float("rope.scaling.attn_factor", 0)
	rc.Factor = factor
	rc.OrigCtx = w.Uint("rope.scaling.original_context_length", w.Uint("context_length", 0))
	return nil
}

// RopeSections reads `<arch>.rope.dimension_sections`, the rotary pairs
// each M-RoPE position id (t, h, w, e) owns; all zero when absent.
func RopeSections(w *Weights) ([4]int, error) {
	var s [4]int
	v, ok := w.Src.Meta().Ints(w.Arch + ".rope.dimension_sections")
	if !ok {
		return s, nil
	}
	if len(v) > 4 {
		return s, fmt.Errorf("model: %s.rope.dimension_sections has %d entries (at most 4)", w.Arch, len(v))
	}
	for i, x := range v {
		if x < 0 || x > 1<<16 {
			return s, fmt.Errorf("model: %s.rope.dimension_sections %v out of range", w.Arch, v)
		}
		s[i] = int(x)
	}
	return s, nil
}
