package ops

import "math"

// TableSections is Table for multi-section rotary positions (M-RoPE, as
// the Qwen-VL family place image rows), interleaved as llama.cpp's IMROPE
// does: rotary pair j turns by pos[0] (t) when j mod 3 = 0 and j < 3·s[0],
// by pos[1] (h) when j mod 3 = 1 and j < 3·s[1], by pos[2] (w) when
// j mod 3 = 2 and j < 3·s[2], and by pos[3] otherwise. Each angle is the
// chosen position times base^(−2j/Dims), formed by the same repeated
// float32 multiplication as Table, so when every pair reads one id the
// table equals Table's for that position bit for bit.
func (r *Rope) TableSections(pos [4]int, s [4]int, buf []float32) []float32 {
	if cap(buf) < r.dims {
		buf = make([]float32, r.dims)
	}
	half := r.dims / 2
	cos, sin := buf[:half], buf[half:r.dims]
	theta := [4]float32{float32(pos[0]), float32(pos[1]), float32(pos[2]), float32(pos[3])}
	for i := range cos {
		sec := 3
		switch m := i % 3; {
		case m == 0 && i < 3*s[0]:
			sec = 0
		case m == 1 && i < 3*s[1]:
			sec = 1
		case m == 2 && i < 3*s[2]:
			sec = 2
		}
		th := r.freqScale * theta[sec]
		if r.rampMix != nil {
			mix := r.rampMix[i]
			th = th*(1-mix) + theta[sec]*mix
		}
		sn, c := math.Sincos(float64(th))
		cos[i] = float32(c) * r.mscale
		sin[i] = float32(sn) * r.mscale
		for k := range theta {
			theta[k] *= r.thetaScale
		}
	}
	return buf[:r.dims]
}
