package ops

import (
	"errors"
	"fmt"
	"math"
)

// ErrHadamard is wrapped by every error the Hadamard transforms return.
var ErrHadamard = errors.New("ops: invalid Hadamard transform")

// MaxHadamardBlock is the largest block size the Hadamard transforms accept.
const MaxHadamardBlock = 16384

// HadamardForward computes x ← blockdiag(H_B)·(s ⊙ x) in place: it multiplies
// x elementwise by the sign vector s first (skipped when signs is nil), then
// applies the normalised Sylvester–Walsh–Hadamard matrix
// H_B[i][j] = (−1)^popcount(i&j)/√B, in natural order, to every contiguous
// block of B = block elements. This is the rotation Hadamard-folded ternary
// models (Ternary Bonsai 2) expect on the activations feeding a folded
// weight: W'·x' = W·x when W' = W·Rᵀ and R = blockdiag(H_B)·diag(s).
//
// block must be a power of two no larger than MaxHadamardBlock, len(x) a
// multiple of it, and signs nil or as long as x; otherwise x is untouched
// and the error wraps ErrHadamard.
//
// The transform runs as in-place butterflies (a+b, a−b) with the 1/√B
// scale folded into the sign pass, so results differ from the explicit
// matrix product only by float32 rounding (a few ulp times log₂ B).
func HadamardForward(x []float32, block int, signs []float32) error {
	if err := checkHadamard(x, block, signs); err != nil {
		return err
	}
	scaleSigns(x, signs, hadamardScale(block))
	for b := 0; b < len(x); b += block {
		fwht(x[b : b+block])
	}
	return nil
}

// HadamardInverse computes x ← s ⊙ (blockdiag(H_B)·x) in place: the
// blockwise transform first, then the sign multiply. As H_B is symmetric and
// orthonormal, it undoes HadamardForward with the same block and signs. It
// restores Hadamard-rotated embedding rows (e = S·(H·z)). Arguments and
// errors are as for HadamardForward.
func HadamardInverse(x []float32, block int, signs []float32) error {
	if err := checkHadamard(x, block, signs); err != nil {
		return err
	}
	for b := 0; b < len(x); b += block {
		fwht(x[b : b+block])
	}
	scaleSigns(x, signs, hadamardScale(block))
	return nil
}

func checkHadamard(x []float32, block int, signs []float32) error {
	switch {
	case block <= 0 || block > MaxHadamardBlock || block&(block-1) != 0:
		return fmt.Errorf("%w: block size %d is not a power of two in [1, %d]", ErrHadamard, block, MaxHadamardBlock)
	case len(x)%block != 0:
		return fmt.Errorf("%w: length %d is not a multiple of the block size %d", ErrHadamard, len(x), block)
	case signs != nil && len(signs) != len(x):
		return fmt.Errorf("%w: %d signs for %d values", ErrHadamard, len(signs), len(x))
	}
	return nil
}

func hadamardScale(block int) float32 {
	return float32(1 / math.Sqrt(float64(block)))
}

// scaleSigns sets x[i] *= signs[i]·scale (or x[i] *= scale with nil
// signs). With signs of ±1 the sign multiply is exact, so the two vector
// passes round once per element, like the scalar product would.
func scaleSigns(x, signs []float32, scale float32) {
	if signs != nil {
		Mul(x, x, signs)
	}
	Scale(x, scale)
}

// fwht applies the unnormalised Walsh–Hadamard butterflies to x,
// whose length is a power of two. The first three stages run on groups of
// eight held in registers; the later ones are plain radix-2 sweeps.
func fwht(x []float32) {
	n := len(x)
	if n < 8 {
		for h := 1; h < n; h *= 2 {
			for i := 0; i < n; i += 2 * h {
				for j := i; j < i+h; j++ {
					a, b := x[j], x[j+h]
					x[j], x[j+h] = a+b, a-b
				}
			}
		}
		return
	}
	active.fwht8(x)
	for h := 8; h < n; h *= 2 {
		active.fwhtStage(x, h)
	}
}

// fwht8Generic runs the stages with strides 1, 2 and 4 on every group of
// eight values in x, whose length is a multiple of 8.
func fwht8Generic(x []float32) {
	for i := 0; i+8 <= len(x); i += 8 {
		fwht8(x[i : i+8 : i+8])
	}
}

func fwht8(v []float32) {
	v = v[:8]
	a0, a1 := v[0]+v[1], v[0]-v[1]
	a2, a3 := v[2]+v[3], v[2]-v[3]
	a4, a5 := v[4]+v[5], v[4]-v[5]
	a6, a7 := v[6]+v[7], v[6]-v[7]
	b0, b2 := a0+a2, a0-a2
	b1, b3 := a1+a3, a1-a3
	b4, b6 := a4+a6, a4-a6
	b5, b7 := a5+a7, a5-a7
	v[0], v[4] = b0+b4, b0-b4
	v[1], v[5] = b1+b5, b1-b5
	v[2], v[6] = b2+b6, b2-b6
	v[3], v[7] = b3+b7, b3-b7
}

// fwhtStageGeneric runs the butterflies of stride h over all of x.
func fwhtStageGeneric(x []float32, h int) {
	for i := 0; i+2*h <= len(x); i += 2 * h {
		lo := x[i : i+h : i+h]
		hi := x[i+h : i+2*h : i+2*h]
		for j := range lo {
			a, b := lo[j], hi[j]
			lo[j], hi[j] = a+b, a-b
		}
	}
}
