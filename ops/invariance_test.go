package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestElementwiseInvariance checks that the elementwise kernels give an
// element the same bits wherever it lies in the slice: in the vector body
// or in the tail that the assembly leaves to Go. A model that applies them
// to a whole batch at once then computes each row as it would alone,
// whatever the batch size.
func TestElementwiseInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 67 // eight vectors of 8 and a tail of 3
	x, y := randVec(rng, n), randVec(rng, n)
	for i := range x {
		x[i] *= 8 // the activations' range, through the exp's whole domain
	}
	ops := map[string]func(dst, x, y []float32){
		"Sigmoid":  func(dst, x, _ []float32) { Sigmoid(dst, x) },
		"SiLU":     func(dst, x, _ []float32) { SiLU(dst, x) },
		"SwiGLU":   func(dst, x, y []float32) { SwiGLU(dst, x, y) },
		"Softplus": func(dst, x, _ []float32) { Softplus(dst, x) },
		"Add":      func(dst, x, y []float32) { Add(dst, x, y) },
		"Mul":      func(dst, x, y []float32) { Mul(dst, x, y) },
		"Scale":    func(dst, x, _ []float32) { copy(dst, x); Scale(dst, 0.37) },
		"Axpy":     func(dst, x, y []float32) { copy(dst, y); Axpy(dst, 0.37, x) },
	}
	forEachKernelSet(t, func(t *testing.T) {
		for name, op := range ops {
			whole := make([]float32, n)
			op(whole, x, y)
			for i := range n {
				// Element i alone, and as the first of a slice from i on.
				for _, hi := range []int{i + 1, n} {
					got := make([]float32, hi-i)
					op(got, x[i:hi], y[i:hi])
					if math.Float32bits(got[0]) != math.Float32bits(whole[i]) {
						t.Fatalf("%s: element %d of [%d:%d] = %g, of the whole slice %g", name, i, i, hi, got[0], whole[i])
					}
				}
			}
		}
	})
}
