package ops

import "math"

// Softmax replaces x with softmax(x) in place: exp(x[i] - max) / Σ exp(x[j] - max).
// Subtracting the maximum keeps every exponent ≤ 0, so nothing overflows;
// −Inf entries (masked positions) become exactly 0. The sum is accumulated
// in float64, as ggml does. If every entry is −Inf the result is NaN, as in
// ggml. An empty x is left alone.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// Sigmoid sets dst[i] = 1 / (1 + exp(-x[i])). dst may alias x. It panics if
// len(dst) != len(x).
func Sigmoid(dst, x []float32) {
	if len(dst) != len(x) {
		panic("ops: Sigmoid: dst and x lengths differ")
	}
	for i, v := range x {
		dst[i] = sigmoid(v)
	}
}

// SiLU sets dst[i] = x[i] · sigmoid(x[i]) (also called swish). dst may
// alias x. It panics if len(dst) != len(x).
func SiLU(dst, x []float32) {
	if len(dst) != len(x) {
		panic("ops: SiLU: dst and x lengths differ")
	}
	for i, v := range x {
		dst[i] = silu(v)
	}
}

// SwiGLU sets dst[i] = silu(gate[i]) · up[i], the gated activation of the
// Llama/Qwen MLP. dst may alias gate or up. It panics unless all three
// lengths are equal.
func SwiGLU(dst, gate, up []float32) {
	if len(gate) != len(dst) || len(up) != len(dst) {
		panic("ops: SwiGLU: dst, gate and up lengths differ")
	}
	up = up[:len(dst)]
	for i, g := range gate[:len(dst)] {
		dst[i] = silu(g) * up[i]
	}
}

// Softplus sets dst[i] = log(1 + exp(x[i])), with ggml's shortcut
// softplus(x) = x for x > 20, where the two agree in float32 and exp(x)
// would otherwise grow towards overflow. dst may alias x. It panics if
// len(dst) != len(x).
func Softplus(dst, x []float32) {
	if len(dst) != len(x) {
		panic("ops: Softplus: dst and x lengths differ")
	}
	for i, v := range x {
		if v > 20 {
			dst[i] = v
			continue
		}
		dst[i] = float32(math.Log1p(math.Exp(float64(v))))
	}
}

// sigmoid is evaluated in float64 and rounded once, so it is correctly
// rounded for all practical purposes and saturates cleanly to 0 and 1.
func sigmoid(x float32) float32 {
	return float32(1 / (1 + math.Exp(-float64(x))))
}

func silu(x float32) float32 {
	return float32(float64(x) / (1 + math.Exp(-float64(x))))
}
