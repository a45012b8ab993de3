package kernels

import "math"

// The generic tier computes the ternary and binary formats with one 64-bit
// multiply per four or five weights instead of a multiply-add per weight.
// A table spreads a code byte's codes c_j into 16-bit lanes of a word,
// C = Σ_j c_j·2^(16j), and each activation row is rewritten once per call
// as words holding the matching activations in reverse lane order,
// A = Σ_j a_j·2^(16(3−j)). The product C·A then holds Σ_j c_j·a_j in lane
// 48: every other product c_j·a_i lands in a lower lane (i > j) or at 2^64
// and above (i < j), where the multiply drops it.
//
// The activations are signed, so the lower lanes hold signed sums that
// borrow from lane 48; adding 2^47 before the arithmetic shift undoes the
// borrow as long as they total less than 2^47 in magnitude. Their terms
// are at most 3·128 each, so the raw products of a whole 32-element block
// (eight or more) are summed before the one shift: per four weights a
// table load, an activation load, a multiply and an add.
//
// Each 32-element block of words ends in a tail word that carries the
// block's activation scale d in its low 32 bits, the 2^47 bias and −s
// (s = Σq) in lane 48, where both join the sum for free:
// Σ (c−1)·q = Σ c·q − s. The low bits add less than 2^32 to the lower
// lanes. The tail keeps one slice, not
// three, in the inner loops, whose bounds checks and slicing would
// otherwise cost as much as the products.
//
// The per-block sums are small helpers that the compiler inlines; a call
// per block costs as much as the block, and large loop bodies make the
// register allocator spill the sums.

// swarKernel is the generic-tier product of one format.
type swarKernel struct {
	act   actKind // the int8 activations the words are built from
	be    int     // elements per weight block
	words int     // activation words per weight block
	// build writes the words of one activation row from its int8 values q
	// and per-32 scales d and sums s; len(x) = len(q)/be·words.
	build func(q []int8, d []float32, s []int32, x []uint64)
	// dot returns Σ W·x̂ for one packed row w and the words of its
	// activation row.
	dot func(w []byte, x []uint64) float32
}

var (
	swarQ2_0    = &swarKernel{act: actQ8_0, be: 128, words: 4 * 9, build: buildQ2_0Swar, dot: dotQ2_0Swar}
	swarQ2_0g64 = &swarKernel{act: actQ8_0, be: 64, words: 2 * 9, build: buildQ2_0Swar, dot: dotQ2_0g64Swar}
	swarQ1_0    = &swarKernel{act: actQ8_0, be: 128, words: 4 * 9, build: buildQ1_0Swar, dot: dotQ1_0Swar}
	swarTQ2_0   = &swarKernel{act: actQ8_K, be: 256, words: 64 + 1, build: buildTQ2_0Swar, dot: dotTQ2_0Swar}
	swarTQ1_0   = &swarKernel{act: actQ8_K, be: 256, words: 52 + 1, build: buildTQ1_0Swar, dot: dotTQ1_0Swar}
	swarPTQ1_0  = &swarKernel{act: actQ8_0, be: 128, words: 56 + 4, build: buildPTQ1_0Swar, dot: dotPTQ1_0Swar}
)

// The code tables. codes2 spreads a byte's four 2-bit codes (code j at
// bits 2j) into 16-bit lanes; bits1 spreads the bits of a byte likewise,
// the low nibble into its first word and the high one into its second;
// trits16 spreads the first four trits of a base-3 byte likewise and
// trit4[p] holds its fifth in lane p; trits12 puts all five at bits 12n+4.
var (
	codes2, trits16, trits12 [256]uint64
	bits1                    [256][2]uint64
	trit4                    [4][256]uint64
)

func init() {
	for b := range 256 {
		for j := range 4 {
			codes2[b] |= uint64(b>>(2*j)&3) << (16 * j)
			bits1[b][0] |= uint64(b>>j&1) << (16 * j)
			bits1[b][1] |= uint64(b>>(4+j)&1) << (16 * j)
			trits16[b] |= uint64(trits[b][j]) << (16 * j)
			trit4[j][b] = uint64(trits[b][4]) << (16 * j)
		}
		for n := range 5 {
			trits12[b] |= uint64(trits[b][n]) << (12*n + 4)
		}
	}
}

// word16 packs four signed activations in reverse lane order (a at bit 48).
func word16(a, b, c, d int64) uint64 {
	return uint64(a<<48 + b<<32 + c<<16 + d)
}

// tail is the tail word of a block with scale d and sum s.
func tail(d float32, s int32) uint64 {
	return uint64(-int64(s))<<48 + bias + uint64(math.Float32bits(d))
}

// tailScale returns the scale of tail word t.
func tailScale(t uint64) float32 { return math.Float32frombits(uint32(t)) }

// bias, added to a sum of products of word16 words with a 16-bit-lane
// table whose lower lanes sum to less than 2^47 in magnitude, undoes their
// borrow from lane 48. Tail words carry it, so that a block pays no add.
const bias = 1 << 47

// lane48 returns the signed 16-bit lane at bit 48 of such a biased sum.
func lane48(p uint64) int32 { return int32(int64(p) >> 48) }

// q2x4 is the sum of four code bytes' products with their words. It loads
// the bytes in pairs: a load and a shift cost less than two loads.
func q2x4(c *[4]byte, y *[4]uint64) uint64 {
	c01, c23 := uint32(c[0])|uint32(c[1])<<8, uint32(c[2])|uint32(c[3])<<8
	return codes2[uint8(c01)]*y[0] + codes2[c01>>8]*y[1] + codes2[uint8(c23)]*y[2] + codes2[c23>>8]*y[3]
}

// q1x2 is the sum of two Q1_0 code bytes' products with their words, one
// per nibble.
func q1x2(c *[2]byte, y *[4]uint64) uint64 {
	b0, b1 := &bits1[c[0]], &bits1[c[1]]
	return b0[0]*y[0] + b0[1]*y[1] + b1[0]*y[2] + b1[1]*y[3]
}

// scale16 is fp16 for the block scales, without a call: a float32 with
// the binary16 sign, exponent and mantissa bits, times 2^112, is the value
// (subnormals included); Inf and NaN keep an all-ones exponent. One
// arithmetic shift of the half in the top bits places all three fields;
// the mask clears the sign's copies.
func scale16(b *[2]byte) float32 {
	h := uint32(b[0])<<16 | uint32(b[1])<<24
	m := uint32(int32(h)>>3) & 0x8fffe000
	if h<<1 >= 0x7c00<<17 {
		m |= 0x7f800000
	}
	return math.Float32frombits(m) * 0x1p112
}

// buildQ2_0Swar writes, per 32-element block, one word per four
// consecutive activations (the elements of a Q2_0 code byte) and the tail.
// The lower lanes of a product hold at most three terms |c·q| ≤ 3·128, and
// lane 48 sums at most 32 such terms and −s, |Σ| < 2^15.
func buildQ2_0Swar(q []int8, d []float32, s []int32, x []uint64) {
	for k := 0; 32*k+32 <= len(q) && 9*k+9 <= len(x) && k < len(d) && k < len(s); k++ {
		a, y := (*[32]int8)(q[32*k:]), (*[9]uint64)(x[9*k:])
		for g := range 8 {
			y[g] = word16(int64(a[4*g]), int64(a[4*g+1]), int64(a[4*g+2]), int64(a[4*g+3]))
		}
		y[8] = tail(d[k], s[k])
	}
}

// buildQ1_0Swar is buildQ2_0Swar with doubled activations, so that lane 48
// sums 2·bit·q − q = (2·bit−1)·q, |Σ| ≤ 32·128.
func buildQ1_0Swar(q []int8, d []float32, s []int32, x []uint64) {
	for k := 0; 32*k+32 <= len(q) && 9*k+9 <= len(x) && k < len(d) && k < len(s); k++ {
		a, y := (*[32]int8)(q[32*k:]), (*[9]uint64)(x[9*k:])
		for g := range 8 {
			y[g] = word16(2*int64(a[4*g]), 2*int64(a[4*g+1]), 2*int64(a[4*g+2]), 2*int64(a[4*g+3]))
		}
		y[8] = tail(d[k], s[k])
	}
}

// dotQ2_0Swar is the Q2_0 (g128) row product in the association of ggml's
// generic kernel: per 32-block d·int, summed, times the weight scale. It
// takes blocks in pairs where it can: a step's bounds checks and loop cost
// as much as a tenth of its work.
func dotQ2_0Swar(w []byte, x []uint64) float32 {
	var sum float32
	n := min(len(w)/34, len(x)/36)
	for i := 0; i+2 <= n; i += 2 {
		blk, y := (*[68]byte)(w[34*i:]), (*[72]uint64)(x[36*i:])
		v0 := lane48(q2x4((*[4]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q2x4((*[4]byte)(blk[6:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q2x4((*[4]byte)(blk[10:]), (*[4]uint64)(y[9:])) + q2x4((*[4]byte)(blk[14:]), (*[4]uint64)(y[13:])) + y[17])
		v2 := lane48(q2x4((*[4]byte)(blk[18:]), (*[4]uint64)(y[18:])) + q2x4((*[4]byte)(blk[22:]), (*[4]uint64)(y[22:])) + y[26])
		v3 := lane48(q2x4((*[4]byte)(blk[26:]), (*[4]uint64)(y[27:])) + q2x4((*[4]byte)(blk[30:]), (*[4]uint64)(y[31:])) + y[35])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1) +
			tailScale(y[26])*float32(v2) + tailScale(y[35])*float32(v3))
		v0 = lane48(q2x4((*[4]byte)(blk[36:]), (*[4]uint64)(y[36:])) + q2x4((*[4]byte)(blk[40:]), (*[4]uint64)(y[40:])) + y[44])
		v1 = lane48(q2x4((*[4]byte)(blk[44:]), (*[4]uint64)(y[45:])) + q2x4((*[4]byte)(blk[48:]), (*[4]uint64)(y[49:])) + y[53])
		v2 = lane48(q2x4((*[4]byte)(blk[52:]), (*[4]uint64)(y[54:])) + q2x4((*[4]byte)(blk[56:]), (*[4]uint64)(y[58:])) + y[62])
		v3 = lane48(q2x4((*[4]byte)(blk[60:]), (*[4]uint64)(y[63:])) + q2x4((*[4]byte)(blk[64:]), (*[4]uint64)(y[67:])) + y[71])
		sum += scale16((*[2]byte)(blk[34:])) * (tailScale(y[44])*float32(v0) + tailScale(y[53])*float32(v1) +
			tailScale(y[62])*float32(v2) + tailScale(y[71])*float32(v3))
	}
	if n%2 != 0 {
		blk, y := (*[34]byte)(w[34*(n-1):]), (*[36]uint64)(x[36*(n-1):])
		v0 := lane48(q2x4((*[4]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q2x4((*[4]byte)(blk[6:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q2x4((*[4]byte)(blk[10:]), (*[4]uint64)(y[9:])) + q2x4((*[4]byte)(blk[14:]), (*[4]uint64)(y[13:])) + y[17])
		v2 := lane48(q2x4((*[4]byte)(blk[18:]), (*[4]uint64)(y[18:])) + q2x4((*[4]byte)(blk[22:]), (*[4]uint64)(y[22:])) + y[26])
		v3 := lane48(q2x4((*[4]byte)(blk[26:]), (*[4]uint64)(y[27:])) + q2x4((*[4]byte)(blk[30:]), (*[4]uint64)(y[31:])) + y[35])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1) +
			tailScale(y[26])*float32(v2) + tailScale(y[35])*float32(v3))
	}
	return sum
}

// dotQ2_0g64Swar is dotQ2_0Swar for 64-element blocks, four per step
// where it can: a step's bounds checks and loop cost as much as a block.
func dotQ2_0g64Swar(w []byte, x []uint64) float32 {
	var sum float32
	n := min(len(w)/18, len(x)/18)
	i := 0
	for ; i+4 <= n; i += 4 {
		blk, y := (*[72]byte)(w[18*i:]), (*[72]uint64)(x[18*i:])
		v0 := lane48(q2x4((*[4]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q2x4((*[4]byte)(blk[6:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q2x4((*[4]byte)(blk[10:]), (*[4]uint64)(y[9:])) + q2x4((*[4]byte)(blk[14:]), (*[4]uint64)(y[13:])) + y[17])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1))
		v0 = lane48(q2x4((*[4]byte)(blk[20:]), (*[4]uint64)(y[18:])) + q2x4((*[4]byte)(blk[24:]), (*[4]uint64)(y[22:])) + y[26])
		v1 = lane48(q2x4((*[4]byte)(blk[28:]), (*[4]uint64)(y[27:])) + q2x4((*[4]byte)(blk[32:]), (*[4]uint64)(y[31:])) + y[35])
		sum += scale16((*[2]byte)(blk[18:])) * (tailScale(y[26])*float32(v0) + tailScale(y[35])*float32(v1))
		v0 = lane48(q2x4((*[4]byte)(blk[38:]), (*[4]uint64)(y[36:])) + q2x4((*[4]byte)(blk[42:]), (*[4]uint64)(y[40:])) + y[44])
		v1 = lane48(q2x4((*[4]byte)(blk[46:]), (*[4]uint64)(y[45:])) + q2x4((*[4]byte)(blk[50:]), (*[4]uint64)(y[49:])) + y[53])
		sum += scale16((*[2]byte)(blk[36:])) * (tailScale(y[44])*float32(v0) + tailScale(y[53])*float32(v1))
		v0 = lane48(q2x4((*[4]byte)(blk[56:]), (*[4]uint64)(y[54:])) + q2x4((*[4]byte)(blk[60:]), (*[4]uint64)(y[58:])) + y[62])
		v1 = lane48(q2x4((*[4]byte)(blk[64:]), (*[4]uint64)(y[63:])) + q2x4((*[4]byte)(blk[68:]), (*[4]uint64)(y[67:])) + y[71])
		sum += scale16((*[2]byte)(blk[54:])) * (tailScale(y[62])*float32(v0) + tailScale(y[71])*float32(v1))
	}
	for ; i < n; i++ {
		blk, y := (*[18]byte)(w[18*i:]), (*[18]uint64)(x[18*i:])
		v0 := lane48(q2x4((*[4]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q2x4((*[4]byte)(blk[6:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q2x4((*[4]byte)(blk[10:]), (*[4]uint64)(y[9:])) + q2x4((*[4]byte)(blk[14:]), (*[4]uint64)(y[13:])) + y[17])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1))
	}
	return sum
}

// dotQ1_0Swar is the Q1_0 row product in the association of ggml's
// generic kernel, blocks in pairs as in dotQ2_0Swar.
func dotQ1_0Swar(w []byte, x []uint64) float32 {
	var sum float32
	n := min(len(w)/18, len(x)/36)
	for i := 0; i+2 <= n; i += 2 {
		blk, y := (*[36]byte)(w[18*i:]), (*[72]uint64)(x[36*i:])
		v0 := lane48(q1x2((*[2]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q1x2((*[2]byte)(blk[4:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q1x2((*[2]byte)(blk[6:]), (*[4]uint64)(y[9:])) + q1x2((*[2]byte)(blk[8:]), (*[4]uint64)(y[13:])) + y[17])
		v2 := lane48(q1x2((*[2]byte)(blk[10:]), (*[4]uint64)(y[18:])) + q1x2((*[2]byte)(blk[12:]), (*[4]uint64)(y[22:])) + y[26])
		v3 := lane48(q1x2((*[2]byte)(blk[14:]), (*[4]uint64)(y[27:])) + q1x2((*[2]byte)(blk[16:]), (*[4]uint64)(y[31:])) + y[35])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1) +
			tailScale(y[26])*float32(v2) + tailScale(y[35])*float32(v3))
		v0 = lane48(q1x2((*[2]byte)(blk[20:]), (*[4]uint64)(y[36:])) + q1x2((*[2]byte)(blk[22:]), (*[4]uint64)(y[40:])) + y[44])
		v1 = lane48(q1x2((*[2]byte)(blk[24:]), (*[4]uint64)(y[45:])) + q1x2((*[2]byte)(blk[26:]), (*[4]uint64)(y[49:])) + y[53])
		v2 = lane48(q1x2((*[2]byte)(blk[28:]), (*[4]uint64)(y[54:])) + q1x2((*[2]byte)(blk[30:]), (*[4]uint64)(y[58:])) + y[62])
		v3 = lane48(q1x2((*[2]byte)(blk[32:]), (*[4]uint64)(y[63:])) + q1x2((*[2]byte)(blk[34:]), (*[4]uint64)(y[67:])) + y[71])
		sum += scale16((*[2]byte)(blk[18:])) * (tailScale(y[44])*float32(v0) + tailScale(y[53])*float32(v1) +
			tailScale(y[62])*float32(v2) + tailScale(y[71])*float32(v3))
	}
	if n%2 != 0 {
		blk, y := (*[18]byte)(w[18*(n-1):]), (*[36]uint64)(x[36*(n-1):])
		v0 := lane48(q1x2((*[2]byte)(blk[2:]), (*[4]uint64)(y[0:])) + q1x2((*[2]byte)(blk[4:]), (*[4]uint64)(y[4:])) + y[8])
		v1 := lane48(q1x2((*[2]byte)(blk[6:]), (*[4]uint64)(y[9:])) + q1x2((*[2]byte)(blk[8:]), (*[4]uint64)(y[13:])) + y[17])
		v2 := lane48(q1x2((*[2]byte)(blk[10:]), (*[4]uint64)(y[18:])) + q1x2((*[2]byte)(blk[12:]), (*[4]uint64)(y[22:])) + y[26])
		v3 := lane48(q1x2((*[2]byte)(blk[14:]), (*[4]uint64)(y[27:])) + q1x2((*[2]byte)(blk[16:]), (*[4]uint64)(y[31:])) + y[35])
		sum += scale16((*[2]byte)(blk[0:])) * (tailScale(y[8])*float32(v0) + tailScale(y[17])*float32(v1) +
			tailScale(y[26])*float32(v2) + tailScale(y[35])*float32(v3))
	}
	return sum
}

// blockTail is the tail word of a Q8_K block: its one scale and Σq over
// its 256 elements in the high half.
func blockTail(d []float32, s []int32) uint64 {
	var sum int32
	for _, v := range s[:qkK/qk] {
		sum += v
	}
	return uint64(uint32(sum))<<32 | uint64(math.Float32bits(d[0]))
}

// buildTQ2_0Swar writes one word per TQ2_0 code byte, then the block's
// tail: byte m of the 32-byte group g of a 256-element block holds elements
// 128g+32l+m at bits 2l. All share the block's one Q8_K scale, so a
// product may mix 32-blocks.
func buildTQ2_0Swar(q []int8, d []float32, s []int32, x []uint64) {
	for g := 0; 256*g+256 <= len(q) && 65*g+65 <= len(x) && 8*g+8 <= len(d) && 8*g+8 <= len(s); g++ {
		a, y := (*[256]int8)(q[256*g:]), (*[65]uint64)(x[65*g:])
		for m := range 32 {
			y[m] = word16(int64(a[m]), int64(a[32+m]), int64(a[64+m]), int64(a[96+m]))
			y[32+m] = word16(int64(a[128+m]), int64(a[160+m]), int64(a[192+m]), int64(a[224+m]))
		}
		y[64] = blockTail(d[8*g:], s[8*g:])
	}
}

// dotTQ2_0Swar is the TQ2_0 row product: one exact int32 sum per
// 256-element block times the product of the two scales, as in ggml's
// generic kernel. A shift every sixteen products (64 elements,
// |Σ| ≤ 64·3·128) keeps lane 48 within 16 bits.
func dotTQ2_0Swar(w []byte, x []uint64) float32 {
	var sum float32
	for i := range min(len(w)/66, len(x)/65) {
		blk, y := (*[66]byte)(w[66*i:]), (*[65]uint64)(x[65*i:])
		v := lane48(bias + q2x4((*[4]byte)(blk[0:]), (*[4]uint64)(y[0:])) + q2x4((*[4]byte)(blk[4:]), (*[4]uint64)(y[4:])) +
			q2x4((*[4]byte)(blk[8:]), (*[4]uint64)(y[8:])) + q2x4((*[4]byte)(blk[12:]), (*[4]uint64)(y[12:])))
		v += lane48(bias + q2x4((*[4]byte)(blk[16:]), (*[4]uint64)(y[16:])) + q2x4((*[4]byte)(blk[20:]), (*[4]uint64)(y[20:])) +
			q2x4((*[4]byte)(blk[24:]), (*[4]uint64)(y[24:])) + q2x4((*[4]byte)(blk[28:]), (*[4]uint64)(y[28:])))
		v += lane48(bias + q2x4((*[4]byte)(blk[32:]), (*[4]uint64)(y[32:])) + q2x4((*[4]byte)(blk[36:]), (*[4]uint64)(y[36:])) +
			q2x4((*[4]byte)(blk[40:]), (*[4]uint64)(y[40:])) + q2x4((*[4]byte)(blk[44:]), (*[4]uint64)(y[44:])))
		v += lane48(bias + q2x4((*[4]byte)(blk[48:]), (*[4]uint64)(y[48:])) + q2x4((*[4]byte)(blk[52:]), (*[4]uint64)(y[52:])) +
			q2x4((*[4]byte)(blk[56:]), (*[4]uint64)(y[56:])) + q2x4((*[4]byte)(blk[60:]), (*[4]uint64)(y[60:])))
		v -= int32(y[64] >> 32)
		sum += float32(v) * (tailScale(y[64]) * scale16((*[2]byte)(blk[64:])))
	}
	return sum
}

// buildTQ1_0Swar writes one word per TQ1_0 byte, then the block's tail.
// A word holds the byte's activations at bits 12(4−n) for trit n: stage A
// byte m holds elements 32n+m, stage B byte m 160+16n+m, qh byte h (four
// trits) 240+4n+h. Against trits12 the sum lands at bit 52 and the
// products of trit j with activation i < j at 2^64 and above; the lower
// lanes total less than 1024·2^40 = 2^50 in magnitude.
func buildTQ1_0Swar(q []int8, d []float32, s []int32, x []uint64) {
	for g := 0; 256*g+256 <= len(q) && 53*g+53 <= len(x) && 8*g+8 <= len(d) && 8*g+8 <= len(s); g++ {
		a, y := (*[256]int8)(q[256*g:]), (*[53]uint64)(x[53*g:])
		for m := range 32 {
			y[m] = word12(a[m], a[32+m], a[64+m], a[96+m], a[128+m])
		}
		for m := range 16 {
			y[32+m] = word12(a[160+m], a[176+m], a[192+m], a[208+m], a[224+m])
		}
		for h := range 4 {
			y[48+h] = word12(a[240+h], a[244+h], a[248+h], a[252+h], 0)
		}
		y[52] = blockTail(d[8*g:], s[8*g:])
	}
}

// word12 packs five signed activations at bits 48, 36, 24, 12 and 0.
func word12(a, b, c, d, e int8) uint64 {
	return uint64(int64(a)<<48 + int64(b)<<36 + int64(c)<<24 + int64(d)<<12 + int64(e))
}

// lane52 returns the signed 12-bit lane at bit 52 of a product of a word12
// word with trits12.
func lane52(p uint64) int32 { return int32(int64(p+1<<51) >> 52) }

// dotTQ1_0Swar is the TQ1_0 row product: one exact int32 sum per
// 256-element block times the product of the two scales, as in ggml's
// generic kernel.
func dotTQ1_0Swar(w []byte, x []uint64) float32 {
	var sum float32
	for i := range min(len(w)/54, len(x)/53) {
		blk, y := (*[54]byte)(w[54*i:]), (*[53]uint64)(x[53*i:])
		v := tq1Sum((*[52]byte)(blk[:52]), (*[52]uint64)(y[:52])) - int32(y[52]>>32)
		sum += float32(v) * (tailScale(y[52]) * scale16((*[2]byte)(blk[52:])))
	}
	return sum
}

// tq1Sum returns Σ t·q of the 52 code bytes of a TQ1_0 block. Lane 52 is
// only 12 bits wide (|Σ t·q| ≤ 5·2·128 = 1280 fits one product), so every
// product is shifted on its own. It is a function of its own so that its
// loop keeps its sums in registers.
func tq1Sum(c *[52]byte, y *[52]uint64) int32 {
	var v0, v1 int32
	for m := 0; m < 52; m += 4 {
		v0 += lane52(trits12[c[m]]*y[m]) + lane52(trits12[c[m+1]]*y[m+1])
		v1 += lane52(trits12[c[m+2]]*y[m+2]) + lane52(trits12[c[m+3]]*y[m+3])
	}
	return v0 + v1
}

// PTQ1_0 bytes mix elements of different 32-blocks (each with its own
// scale): trits 0–1 and 2–3 of a stage A byte fall in blocks 0 and 1, its
// trit 4 in block 2; trits 0–1 of a stage B byte in block 2, the rest and
// the qh bytes in block 3. So a byte's trits16 word meets two words, one
// with the activations of trits 0–1 in lanes 3–2 and one with those of
// trits 2–3 in lanes 1–0, and the trit 4 of four bytes is gathered into
// one word against their four activations. Every block then sums twelve
// to sixteen products whose lower lanes hold at most three terms of 2·128.
//
// Per 128-element block the 60 words are, for each group of four stage A
// bytes (m = 4g..4g+3): X words (m, 16+m), Y words (32+m, 48+m) and the
// trit-4 word (64+4g..67+4g); then the same for the two groups of stage B
// (80+m, 88+m; 96+m, 104+m; 112+4g..115+4g), one word per qh byte (120+h,
// 122+h, 124+h, 126+h) and the tails of the four blocks.

func buildPTQ1_0Swar(q []int8, d []float32, s []int32, x []uint64) {
	for g := 0; 128*g+128 <= len(q) && 60*g+60 <= len(x) && 4*g+4 <= len(d) && 4*g+4 <= len(s); g++ {
		a, y := (*[128]int8)(q[128*g:]), (*[60]uint64)(x[60*g:])
		for j := range 4 {
			z := (*[9]uint64)(y[9*j:])
			for p := range 4 {
				m := 4*j + p
				z[p] = word16(int64(a[m]), int64(a[16+m]), 0, 0)
				z[4+p] = word16(0, 0, int64(a[32+m]), int64(a[48+m]))
			}
			z[8] = word16(int64(a[64+4*j]), int64(a[65+4*j]), int64(a[66+4*j]), int64(a[67+4*j]))
		}
		for j := range 2 {
			z := (*[9]uint64)(y[36+9*j:])
			for p := range 4 {
				m := 4*j + p
				z[p] = word16(int64(a[80+m]), int64(a[88+m]), 0, 0)
				z[4+p] = word16(0, 0, int64(a[96+m]), int64(a[104+m]))
			}
			z[8] = word16(int64(a[112+4*j]), int64(a[113+4*j]), int64(a[114+4*j]), int64(a[115+4*j]))
		}
		for h := range 2 {
			y[54+h] = word16(int64(a[120+h]), int64(a[122+h]), int64(a[124+h]), int64(a[126+h]))
		}
		for k := range 4 {
			y[56+k] = tail(d[4*g+k], s[4*g+k])
		}
	}
}

// t4x4 gathers the trits 4 of four PTQ1_0 bytes into 16-bit lanes.
func t4x4(b0, b1, b2, b3 byte) uint64 {
	return trit4[0][b0] | trit4[1][b1] | trit4[2][b2] | trit4[3][b3]
}

// dotPTQ1_0Swar is the PTQ1_0 row product in the association of ggml's
// generic kernels: per 32-block d·int, summed, times the weight scale.
// Each group of four bytes is written out, so that its four bytes and
// table words are loaded once for their two or three products.
func dotPTQ1_0Swar(w []byte, x []uint64) float32 {
	var sum float32
	for i := range min(len(w)/28, len(x)/60) {
		blk, y := (*[28]byte)(w[28*i:]), (*[60]uint64)(x[60*i:])
		s0, s1, s2, s3 := y[56], y[57], y[58], y[59]

		b0, b1, b2, b3 := blk[0], blk[1], blk[2], blk[3]
		e0, e1, e2, e3 := trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s0 += e0*y[0] + e1*y[1] + e2*y[2] + e3*y[3]
		s1 += e0*y[4] + e1*y[5] + e2*y[6] + e3*y[7]
		s2 += t4x4(b0, b1, b2, b3) * y[8]

		b0, b1, b2, b3 = blk[4], blk[5], blk[6], blk[7]
		e0, e1, e2, e3 = trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s0 += e0*y[9] + e1*y[10] + e2*y[11] + e3*y[12]
		s1 += e0*y[13] + e1*y[14] + e2*y[15] + e3*y[16]
		s2 += t4x4(b0, b1, b2, b3) * y[17]

		b0, b1, b2, b3 = blk[8], blk[9], blk[10], blk[11]
		e0, e1, e2, e3 = trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s0 += e0*y[18] + e1*y[19] + e2*y[20] + e3*y[21]
		s1 += e0*y[22] + e1*y[23] + e2*y[24] + e3*y[25]
		s2 += t4x4(b0, b1, b2, b3) * y[26]

		b0, b1, b2, b3 = blk[12], blk[13], blk[14], blk[15]
		e0, e1, e2, e3 = trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s0 += e0*y[27] + e1*y[28] + e2*y[29] + e3*y[30]
		s1 += e0*y[31] + e1*y[32] + e2*y[33] + e3*y[34]
		s2 += t4x4(b0, b1, b2, b3) * y[35]

		b0, b1, b2, b3 = blk[16], blk[17], blk[18], blk[19]
		e0, e1, e2, e3 = trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s2 += e0*y[36] + e1*y[37] + e2*y[38] + e3*y[39]
		s3 += e0*y[40] + e1*y[41] + e2*y[42] + e3*y[43]
		s3 += t4x4(b0, b1, b2, b3) * y[44]

		b0, b1, b2, b3 = blk[20], blk[21], blk[22], blk[23]
		e0, e1, e2, e3 = trits16[b0], trits16[b1], trits16[b2], trits16[b3]
		s2 += e0*y[45] + e1*y[46] + e2*y[47] + e3*y[48]
		s3 += e0*y[49] + e1*y[50] + e2*y[51] + e3*y[52]
		s3 += t4x4(b0, b1, b2, b3) * y[53]

		s3 += trits16[blk[24]]*y[54] + trits16[blk[25]]*y[55]
		sumi := tailScale(y[56])*float32(lane48(s0)) + tailScale(y[57])*float32(lane48(s1)) +
			tailScale(y[58])*float32(lane48(s2)) + tailScale(y[59])*float32(lane48(s3))
		sum += scale16((*[2]byte)(blk[26:])) * sumi
	}
	return sum
}

// layout builds the words of every activation row (traits.acts), once per
// Quantize and kernel: formats with the same words share them.
func (sk *swarKernel) layout(a *Acts, p *Pool) {
	if a.swarOf == sk {
		return
	}
	t := a.prepare(p, sk.act)
	per, nb := a.cols/sk.be*sk.words, a.cols/qk
	a.swar = grow(a.swar, a.n*per)
	p.For(a.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sk.build(t.q[i*a.cols:(i+1)*a.cols], t.d[i*nb:(i+1)*nb], t.s[i*nb:(i+1)*nb], a.swar[i*per:(i+1)*per])
		}
	})
	a.swarOf = sk
}

// rowWords returns activation row i's words.
func (sk *swarKernel) rowWords(a *Acts, i int) []uint64 {
	per := a.cols / sk.be * sk.words
	return a.swar[i*per : (i+1)*per]
}

// dotAct is the format's dotFn.
func (sk *swarKernel) dotAct(w []byte, a *Acts, i int) float32 { return sk.dot(w, sk.rowWords(a, i)) }

// rowsAct is the format's rowsFn.
func (sk *swarKernel) rowsAct(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
	x := sk.rowWords(a, i)
	for r := lo; r < hi; r++ {
		dst[r] = sk.dot(w.row(r), x)
	}
}
