package quant

import (
	"encoding/binary"
	"math"

	"trit/half"
)

// The k-quants follow ggml's ggml-quants.c operation by operation. Every
// product that feeds an addition is wrapped in float32() so that Go never
// fuses it into a multiply-add: the reference is plain C float arithmetic.

// groupMaxEps is ggml's GROUP_MAX_EPS: below it a group counts as zero.
const groupMaxEps = 1e-15

// nearestInt is ggml's nearest_int: round to nearest, ties to even, via the
// float32 magic-number add. Like the C it is exact for |f| < 2^22; larger
// or NaN inputs give a meaningless but deterministic value, which every
// caller clamps.
func nearestInt(f float32) int {
	v := f + 12582912
	return int(math.Float32bits(v)&0x007fffff) - 0x00400000
}

func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) }

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j of a Q4_K block
// (ggml's get_scale_min_k4).
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// Q4_K (144 bytes per 256): d, dmin (fp16), scales[12], qs[128].

func decodeQ4_K(dst []float32, src []byte) {
	for ; len(src) > 0; src, dst = src[144:], dst[256:] {
		d := half.ToFloat32(binary.LittleEndian.Uint16(src))
		dmin := half.ToFloat32(binary.LittleEndian.Uint16(src[2:]))
		scales, qs := src[4:16], src[16:144]
		for c := range 4 {
			q := qs[32*c : 32*c+32]
			sc, m := scaleMinK4(2*c, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = scaleMinK4(2*c+1, scales)
			d2, m2 := d*float32(sc), dmin*float32(m)
			y := dst[64*c : 64*c+64]
			for l, b := range q {
				y[l] = float32(d1*float32(b&0xf)) - m1
				y[l+32] = float32(d2*float32(b>>4)) - m2
			}
		}
	}
}

// encodeQ4_K is quantize_row_q4_K_ref: per 32-element sub-block a scale and
// a min from make_qkx2_quants (weights av|x| + |x|), both quantized to 6
// bits against the block maxima, then the 4-bit codes requantized with the
// stored scales.
func encodeQ4_K(dst []byte, src []float32) {
	var (
		L       [256]uint8
		laux    [32]uint8
		weights [32]float32
		mins    [8]float32
		scales  [8]float32
	)
	for ; len(src) > 0; src, dst = src[256:], dst[144:] {
		x := src[:256]
		var maxScale, maxMin float32
		for j := range 8 {
			xs := x[32*j : 32*j+32]
			var sumX2 float32
			for _, v := range xs {
				sumX2 += float32(v * v)
			}
			avX := sqrt32(sumX2 / 32)
			for l, v := range xs {
				weights[l] = avX + abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(15, xs, weights[:], L[32*j:32*j+32], laux[:], -1, 0.1, 20)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		var invScale, invMin float32
		if maxScale > 0 {
			invScale = 63 / maxScale
		}
		if maxMin > 0 {
			invMin = 63 / maxMin
		}
		sc := dst[4:16]
		for j := range 8 {
			// C stores nearest_int into a uint8_t (mod 256) before the min.
			ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
			lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
			if j < 4 {
				sc[j], sc[j+4] = ls, lm
			} else {
				sc[j+4] = ls&0xf | lm&0xf<<4
				sc[j-4] |= ls >> 4 << 6
				sc[j] |= lm >> 4 << 6
			}
		}
		dh, mh := half.FromFloat32(maxScale/63), half.FromFloat32(maxMin/63)
		binary.LittleEndian.PutUint16(dst, dh)
		binary.LittleEndian.PutUint16(dst[2:], mh)
		for j := range 8 {
			s, m := scaleMinK4(j, sc)
			d := half.ToFloat32(dh) * float32(s)
			if d == 0 {
				continue
			}
			dm := half.ToFloat32(mh) * float32(m)
			for i, v := range x[32*j : 32*j+32] {
				L[32*j+i] = uint8(clampInt(nearestInt((v+dm)/d), 0, 15))
			}
		}
		qs := dst[16:144]
		for c := range 4 {
			for l := range 32 {
				qs[32*c+l] = L[64*c+l] | L[64*c+l+32]<<4
			}
		}
	}
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// makeQKX2Quants is ggml's make_qkx2_quants with use_mad = false: codes
// 0..nmax in L for x ≈ scale·L − min, searching nstep+1 candidate scales
// for the least weighted squared error. It returns the scale and min.
func makeQKX2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	// Explicit comparisons, not min/max: they keep C's choice between
	// -0 and +0.
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L)
		return 0, -lo
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	var bestError float32
	for i, v := range x {
		L[i] = uint8(clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax))
		diff := float32(scale*float32(L[i])) + lo - v
		bestError += float32(weights[i] * float32(diff*diff))
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			wl := float32(w * fl)
			sumL += wl
			sumL2 += float32(wl * fl)
			sumXL += float32(wl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var curError float32
		for i, v := range x {
			diff := float32(thisScale*float32(laux[i])) + thisMin - v
			curError += float32(weights[i] * float32(diff*diff))
		}
		if curError < bestError {
			copy(L, laux[:len(x)])
			bestError, scale, lo = curError, thisScale, thisMin
		}
	}
	return scale, -lo
}

// Q6_K (210 bytes per 256): ql[128], qh[64], int8 scales[16], d (fp16).

func decodeQ6_K(dst []float32, src []byte) {
	for ; len(src) > 0; src, dst = src[210:], dst[256:] {
		d := half.ToFloat32(binary.LittleEndian.Uint16(src[208:]))
		for h := range 2 {
			ql, qh := src[64*h:64*h+64], src[128+32*h:128+32*h+32]
			sc := src[192+8*h : 192+8*h+8]
			y := dst[128*h : 128*h+128]
			for l := range 32 {
				is := l / 16
				q1 := int(ql[l]&0xf|(qh[l]>>0&3)<<4) - 32
				q2 := int(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
				q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				// d·sc first, then ·q, as the C associates it.
				y[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				y[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				y[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				y[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}

// encodeQ6_K is quantize_row_q6_K_ref: per 16-element sub-block a signed
// scale from make_qx_quants (nmax 32, weights x²), quantized to int8
// against the largest, then the 6-bit codes requantized.
func encodeQ6_K(dst []byte, src []float32) {
	var (
		L      [256]int8
		scales [16]float32
	)
	for ; len(src) > 0; src, dst = src[256:], dst[210:] {
		x := src[:256]
		var maxScale, maxAbsScale float32
		for ib := range 16 {
			s := makeQXQuants(x[16*ib:16*ib+16], L[16*ib:16*ib+16])
			scales[ib] = s
			if a := abs32(s); a > maxAbsScale {
				maxAbsScale, maxScale = a, s
			}
		}
		blk := dst[:210]
		if maxAbsScale < groupMaxEps {
			clear(blk)
			continue
		}
		iscale := -128 / maxScale
		dh := half.FromFloat32(1 / iscale)
		binary.LittleEndian.PutUint16(blk[208:], dh)
		sc := blk[192:208]
		for ib := range 16 {
			// min(127, ·) stored into an int8_t, wrapping like the C.
			sc[ib] = uint8(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		for j := range 16 {
			d := half.ToFloat32(dh) * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for i, v := range x[16*j : 16*j+16] {
				L[16*j+i] = int8(clampInt(nearestInt(v/d), -32, 31) + 32)
			}
		}
		for h := range 2 {
			ql, qh := blk[64*h:64*h+64], blk[128+32*h:128+32*h+32]
			Lh := L[128*h : 128*h+128]
			for l := range 32 {
				q1, q2, q3, q4 := uint8(Lh[l]), uint8(Lh[l+32]), uint8(Lh[l+64]), uint8(Lh[l+96])
				ql[l] = q1&0xf | q3&0xf<<4
				ql[l+32] = q2&0xf | q4&0xf<<4
				qh[l] = q1>>4 | q2>>4<<2 | q3>>4<<4 | q4>>4<<6
			}
		}
	}
}

// makeQXQuants is ggml's make_qx_quants for Q6_K (n = 16, nmax = 32,
// rmse_type 1, no importance weights): codes nmax+l, l in -nmax..nmax-1,
// in L, trying 18 scales around the first for the best weighted fit.
func makeQXQuants(x []float32, L []int8) float32 {
	const nmax = 32
	var max, am float32
	for _, v := range x {
		if a := abs32(v); a > am {
			am, max = a, v
		}
	}
	if am < groupMaxEps {
		clear(L)
		return 0
	}
	codes := func(iscale float32) (sumlx, suml2 float32) {
		for _, v := range x {
			l := float32(clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1))
			w := float32(v * v)
			sumlx += float32(float32(w*v) * l)
			suml2 += float32(float32(w*l) * l)
		}
		return sumlx, suml2
	}
	setL := func(iscale float32) {
		for i, v := range x {
			L[i] = int8(nmax + clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1))
		}
	}
	iscale := -nmax / max
	setL(iscale)
	sumlx, suml2 := codes(iscale)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(nmax + float32(0.1*float32(is))) / max
		sumlx, suml2 = codes(iscale)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			setL(iscale)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}
