package qwen35

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/ops"
)

// randomHead builds delta-rule inputs for one head over nt tokens, with
// unit-norm keys and queries as the layer produces them.
func randomHead(rng *rand.Rand, nt, dk, dv int) *headIn {
	c := 2*dk + dv
	in := &headIn{
		conv: make([]float32, nt*c), c: c, qOff: 0, kOff: dk, vOff: 2 * dk,
		beta: make([]float32, nt), g: make([]float32, nt), hv: 1, j: 0,
		out: make([]float32, nt*dv), vd: dv,
	}
	for t := range nt {
		row := in.conv[t*c : (t+1)*c]
		for i := range row {
			row[i] = float32(rng.NormFloat64())
		}
		ops.L2Norm(row[:dk], row[:dk], 1e-6)
		ops.L2Norm(row[dk:2*dk], row[dk:2*dk], 1e-6)
		ops.Scale(row[:dk], float32(1/math.Sqrt(float64(dk))))
		in.beta[t] = float32(rng.Float64())
		in.g[t] = -float32(rng.Float64() * 0.5)
	}
	return in
}

// TestChunkedKernel compares the chunked delta rule with the recurrent one
// on random inputs, from a zero and from a non-zero state, across chunk
// boundaries: outputs and final states agree to float32 rounding.
func TestChunkedKernel(t *testing.T) {
	const dk, dv = 32, 24
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nt := range []int{1, 2, 63, 64, 65, 200} {
		for _, warm := range []bool{false, true} {
			in := randomHead(rng, nt, dk, dv)
			s0 := make([]float32, dv*dk)
			if warm {
				for i := range s0 {
					s0[i] = float32(rng.NormFloat64() * 0.3)
				}
			}
			sr := append([]float32(nil), s0...)
			sc := append([]float32(nil), s0...)
			recurrent(sr, in, dk, dv)
			want := append([]float32(nil), in.out...)
			clear(in.out)
			chunked(sc, in, dk, dv, nt, newChunkScratch(dk, dv))
			var scale, d float64
			for i := range want {
				scale = max(scale, math.Abs(float64(want[i])))
				d = max(d, math.Abs(float64(want[i]-in.out[i])))
			}
			if d > 1e-5*max(scale, 1) {
				t.Errorf("%d tokens, warm %v: outputs differ by %g (scale %g)", nt, warm, d, scale)
			}
			d = 0
			for i := range sr {
				d = max(d, math.Abs(float64(sr[i]-sc[i])))
			}
			if d > 1e-5 {
				t.Errorf("%d tokens, warm %v: states differ by %g", nt, warm, d)
			}
		}
	}
}
