package ops

import "math"

// Constants of expf, a float32 exponential in the style of Cephes' expf (the
// same shape ggml's vectorised expf has): e^x = 2^n · e^r with
// n = round(x·log₂e) and |r| ≤ ln2/2, e^r from a degree-7 polynomial.
// The assembly kernels evaluate the same steps with fused multiply-adds.
const (
	expLog2e = 1.44269504088896341
	expLn2Hi = 0.693359375 // ln 2 split so that n·expLn2Hi is exact
	expLn2Lo = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
	// expHi keeps n ≤ 127, so 2^n is a normal float32. Above it expf
	// returns +Inf: e^x there is still finite in float32, but the only
	// users (SiLU, sigmoid, softmax) divide by it or never reach it, and
	// Inf gives them their exact limits.
	expHi = 88.3762626647949
	// Below expLo, e^x is under the smallest normal float32 and expf
	// returns 0.
	expLo = -87.3365478515625
)

// expf returns e^x within one ulp for x in [expLo, expHi], 0 below
// expLo, +Inf above expHi, and NaN for NaN. It is several times faster
// than math.Exp and is the pure-Go twin of the vector exponential in the
// assembly kernels.
func expf(x float32) float32 {
	if x != x {
		return x
	}
	if x < expLo {
		return 0
	}
	if x > expHi {
		return float32(math.Inf(1))
	}
	n := float32(math.RoundToEven(float64(x * expLog2e)))
	r := x - n*expLn2Hi
	r -= n * expLn2Lo
	p := ((((expP0*r+expP1)*r+expP2)*r+expP3)*r+expP4)*r + expP5
	y := p*(r*r) + r + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}
