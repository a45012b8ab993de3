package ops

import "math"

// RMSNorm sets dst[i] = x[i] / sqrt(mean(x²) + eps) * weight[i], as ggml's
// rms_norm followed by a multiply by the norm weight. A nil weight means
// all ones. dst may alias x. It panics if len(dst) != len(x) or weight is
// neither nil nor of length len(x).
//
// The sum of squares is accumulated in float64, as ggml does, so long rows
// lose no precision; the scale itself is a float32, again as in ggml.
func RMSNorm(dst, x, weight []float32, eps float32) {
	if len(dst) != len(x) {
		panic("ops: RMSNorm: dst and x lengths differ")
	}
	if weight != nil && len(weight) != len(x) {
		panic("ops: RMSNorm: weight and x lengths differ")
	}
	if len(x) == 0 {
		return
	}
	mean := float32(active.sumSq(x) / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	// (x·scale)·weight rounded twice, as ggml's rms_norm then mul do.
	copy(dst, x)
	Scale(dst, scale)
	if weight != nil {
		Mul(dst, dst, weight)
	}
}

// L2Norm sets dst = x / max(‖x‖₂, eps), as ggml's l2_norm (used by Gated
// DeltaNet on q and k). Note eps floors the norm after the square root; it
// is not added under it, and the sum is not divided by the length. dst may
// alias x. It panics if len(dst) != len(x).
func L2Norm(dst, x []float32, eps float32) {
	if len(dst) != len(x) {
		panic("ops: L2Norm: dst and x lengths differ")
	}
	norm := float32(math.Sqrt(float64(float32(active.sumSq(x)))))
	copy(dst, x)
	Scale(dst, 1/max(norm, eps))
}

// sumSquaresGeneric returns Σ x[i]² with each square rounded to float32 and
// the sum kept in float64, which is what ggml's norms compute. Four partial
// sums break the dependency chain; in float64 the reordering is invisible
// at float32 precision.
func sumSquaresGeneric(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0] * v[0])
		s1 += float64(v[1] * v[1])
		s2 += float64(v[2] * v[2])
		s3 += float64(v[3] * v[3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * x[i])
	}
	return (s0 + s1) + (s2 + s3)
}
