package ops

import "math"

// The exponentials of Softmax, Sigmoid, SiLU and SwiGLU use a fast float32
// exp accurate to about one ulp (the kind ggml's vector code uses too), so
// results are within a few ulp of the exactly rounded functions.

// Softmax replaces x with softmax(x) in place: exp(x[i] - max) / Σ exp(x[j] - max).
// Subtracting the maximum keeps every exponent ≤ 0, so nothing overflows;
// −Inf entries (masked positions) become exactly 0. The sum is accumulated
// in float64, as ggml does. If every entry is −Inf, or any is NaN, the
// result is all NaN, as in ggml. An empty x is left alone.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	sum := active.expSubSum(x, active.max(x))
	Scale(x, float32(1/sum))
}

// Sigmoid sets dst[i] = 1 / (1 + exp(-x[i])). dst may alias x. It panics if
// len(dst) != len(x).
func Sigmoid(dst, x []float32) {
	if len(dst) != len(x) {
		panic("ops: Sigmoid: dst and x lengths differ")
	}
	active.sigmoid(dst, x)
}

// SiLU sets dst[i] = x[i] · sigmoid(x[i]) (also called swish). dst may
// alias x. It panics if len(dst) != len(x).
func SiLU(dst, x []float32) {
	if len(dst) != len(x) {
		panic("ops: SiLU: dst and x lengths differ")
	}
	active.silu(dst, x)
}

// SwiGLU sets dst[i] = silu(gate[i]) · up[i], the gated activation of the
// Llama/Qwen MLP. dst may alias gate or up. It panics unless all three
// lengths are equal.
func SwiGLU(dst, gate, up []float32) {
	if len(gate) != len(dst) || len(up) != len(dst) {
		panic("ops: SwiGLU: dst, gate and up lengths differ")
	}
	active.swiglu(dst, gate, up)
}

// Softplus sets dst[i] = log(1 + exp(x[i])), with ggml's shortcut
// softplus(x) = x for x > 20, where the two agree in float32 and exp(x)
// would otherwise grow towards overflow. It is evaluated in float64 and
// rounded once: it serves per-head gates, not whole rows. dst may alias x.
// It panics if len(dst) != len(x).
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

// maxGeneric returns the largest element of x, or −Inf when x is empty.
// Plain comparisons in four independent chains are several times faster
// than the max builtin, whose NaN and signed-zero rules cost a branch
// chain per element; NaNs never win a comparison here.
func maxGeneric(x []float32) float32 {
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		if v[0] > m0 {
			m0 = v[0]
		}
		if v[1] > m1 {
			m1 = v[1]
		}
		if v[2] > m2 {
			m2 = v[2]
		}
		if v[3] > m3 {
			m3 = v[3]
		}
	}
	for ; i < len(x); i++ {
		if x[i] > m0 {
			m0 = x[i]
		}
	}
	return max(m0, m1, m2, m3)
}

func expSubSumGeneric(x []float32, m float32) float64 {
	var sum float64
	for i, v := range x {
		e := expf(v - m)
		x[i] = e
		sum += float64(e)
	}
	return sum
}

func sigmoidGeneric(dst, x []float32) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = 1 / (1 + expf(-v))
	}
}

func siluGeneric(dst, x []float32) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = v / (1 + expf(-v))
	}
}

func swigluGeneric(dst, gate, up []float32) {
	gate, up = gate[:len(dst)], up[:len(dst)]
	for i, g := range gate {
		dst[i] = g / (1 + expf(-g)) * up[i]
	}
}
