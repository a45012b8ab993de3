//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 trit kernels. A trit comes out of its byte without compares:
// with p_n = b·3ⁿ mod 256 (the level-n byte of b), 3·p_n = 256·t_n + p_(n+1),
// so Σ t_n·a_n = (3·Σ p_n·a_n − Σ p_(n+1)·a_n)/256 exactly. Both sums are
// VPDPBUSDs of the bytes p_n (unsigned) with the activations; p_(n+1) = 3·p_n
// takes two byte adds. A weight unit (a TQ1_0 block, a pair of PTQ1_0
// blocks) sums its levels in Z1 (the p_n terms) and Z2 (the p_(n+1) terms,
// started from 256× the correction), or PTQ1_0 in three such pairs, one
// per level group; each pair is converted once as 3·Z1 − Z2 (one VPMULLD
// by Z16 = 3 and a subtraction: measured faster than two adds and a
// subtraction) and added, times its scales, into Z0; the result is Z0/256
// (exact).
//
// The loops run two units at a time with their instructions interleaved
// (the second in Z17 and up), so that the VPDPBUSD chains of two units
// overlap without relying on the out-of-order window.

// Horizontal sum of Z0 into X0, times 1/256.
#define HSUM256 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS   Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS   X1, X0, X0 \
	VMOVHLPS X0, X1, X1 \
	VADDPS   X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS   X1, X0, X0 \
	MOVL     $0x3b800000, AX \
	VMOVD    AX, X1 \
	VMULSS   X1, X0, X0

// ptq1dperm: VPERMW indexes that put the fp16 scales of a pair of PTQ1_0
// blocks (words 13 and 27) in words 0–3 and 4–7.
DATA ptq1dperm<>+0(SB)/8, $0x000d000d000d000d
DATA ptq1dperm<>+8(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+16(SB)/8, $0
DATA ptq1dperm<>+24(SB)/8, $0
DATA ptq1dperm<>+32(SB)/8, $0
DATA ptq1dperm<>+40(SB)/8, $0
DATA ptq1dperm<>+48(SB)/8, $0
DATA ptq1dperm<>+56(SB)/8, $0
GLOBL ptq1dperm<>(SB), RODATA|NOPTR, $64

// The PTQ1_0 kernel takes a pair of blocks as one unit, in the pair layout
// of trit.go. PLOAD loads the 56 bytes of a pair into W (K: an odd last
// block, a pair with an empty half) and puts the products of the weight
// scales and the eight activation scales at dsoff(R9) in lanes 0–7 of S
// (SX, SY: its XMM and YMM).
#define PLOAD(off, dsoff, K, W, S, SX, SY) \
	VMOVDQU8.Z off(SI), K, W \
	VPERMW W, Z15, S \
	VCVTPH2PS SX, SY \
	VMULPS dsoff(R9), SY, SY

// PSTART starts the sums of the three level groups: A0–A2 (the p_n terms)
// at zero, B0 (the p_(n+1) terms of group 0) at the corrections at
// coff(R8), B1 and B2 at zero.
#define PSTART(coff, A0, B0, A1, B1, A2, B2) \
	VPXORD A0, A0, A0 \
	VPXORD A1, A1, A1 \
	VPXORD A2, A2, A2 \
	VPXORD B1, B1, B1 \
	VPXORD B2, B2, B2 \
	VMOVDQU32 coff(R8), B0

// PLEVEL adds one level: the activations at qoff(DI) times p_n into A and
// times p_(n+1) into B, leaving p_(n+1) in W (T, Q: scratch).
#define PLEVEL(qoff, W, T, Q, A, B) \
	VMOVDQU64 qoff(DI), Q \
	VPDPBUSD Q, W, A \
	VPADDB W, W, T \
	VPADDB T, W, W \
	VPDPBUSD Q, W, B

// PEND forms 3·A − B of each level group and adds it into ACC times the
// group's lane scales, picked from S by the permutations in Z12–Z14
// (T: scratch).
#define PEND(S, ACC, T, A0, B0, A1, B1, A2, B2) \
	VPMULLD Z16, A0, A0 \
	VPMULLD Z16, A1, A1 \
	VPMULLD Z16, A2, A2 \
	VPSUBD B0, A0, A0 \
	VPSUBD B1, A1, A1 \
	VPSUBD B2, A2, A2 \
	VCVTDQ2PS A0, A0 \
	VCVTDQ2PS A1, A1 \
	VCVTDQ2PS A2, A2 \
	VPERMPS S, Z12, T \
	VFMADD231PS T, A0, ACC \
	VPERMPS S, Z13, T \
	VFMADD231PS T, A1, ACC \
	VPERMPS S, Z14, T \
	VFMADD231PS T, A2, ACC

// PUNIT is one pair, not interleaved (the loop's tail).
#define PUNIT(K) \
	PLOAD(0, 0, K, Z4, Z3, X3, Y3) \
	PSTART(0, Z1, Z2, Z6, Z7, Z8, Z9) \
	PLEVEL(0, Z4, Z5, Z10, Z1, Z2) \
	PLEVEL(64, Z4, Z5, Z10, Z1, Z2) \
	PLEVEL(128, Z4, Z5, Z10, Z6, Z7) \
	PLEVEL(192, Z4, Z5, Z10, Z6, Z7) \
	PLEVEL(256, Z4, Z5, Z10, Z8, Z9) \
	PEND(Z3, Z0, Z11, Z1, Z2, Z6, Z7, Z8, Z9)

// func ptq1AVX512(w *byte, nb int, q *int8, c *int32, ds *float32, perm *[3][16]int32) float32
//
// Each int32 lane holds bytes 4j..4j+3 of one block, whose levels fall in
// up to three activation blocks: levels 0–1, 2–3 and 4 (the level groups
// of trit.go) keep separate sums, each with its lanes' scales (ds, eight
// per pair, permuted by perm) and group 0 with the corrections (c, a
// vector per pair). The second unit of the loop adds into Z28. The loop
// prefetches the weights 2 KiB ahead: they stream from memory, and
// without it the longer compute per byte overlaps less with their loads
// (measured ≈12% slower at 12288 columns).
TEXT ·ptq1AVX512(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ c+24(FP), R8
	MOVQ ds+32(FP), R9
	MOVQ perm+40(FP), AX
	VMOVDQU32 (AX), Z12
	VMOVDQU32 64(AX), Z13
	VMOVDQU32 128(AX), Z14
	MOVQ $0x00ffffffffffffff, AX
	KMOVQ AX, K3
	MOVQ $0x0fffffff, AX
	KMOVQ AX, K4
	VMOVDQU64 ptq1dperm<>(SB), Z15
	VPXORD Z0, Z0, Z0
	VPXORD Z28, Z28, Z28
	MOVL $3, AX
	VPBROADCASTD AX, Z16
	SUBQ $4, CX
	JLT  ptq1_tail
ptq1_two:
	PREFETCHT0 2048(SI)
	PREFETCHT0 2112(SI)
	PLOAD(0, 0, K3, Z4, Z3, X3, Y3)
	PLOAD(56, 32, K3, Z20, Z19, X19, Y19)
	PSTART(0, Z1, Z2, Z6, Z7, Z8, Z9)
	PSTART(64, Z17, Z18, Z22, Z23, Z24, Z25)
	PLEVEL(0, Z4, Z5, Z10, Z1, Z2)
	PLEVEL(320, Z20, Z21, Z26, Z17, Z18)
	PLEVEL(64, Z4, Z5, Z10, Z1, Z2)
	PLEVEL(384, Z20, Z21, Z26, Z17, Z18)
	PLEVEL(128, Z4, Z5, Z10, Z6, Z7)
	PLEVEL(448, Z20, Z21, Z26, Z22, Z23)
	PLEVEL(192, Z4, Z5, Z10, Z6, Z7)
	PLEVEL(512, Z20, Z21, Z26, Z22, Z23)
	PLEVEL(256, Z4, Z5, Z10, Z8, Z9)
	PLEVEL(576, Z20, Z21, Z26, Z24, Z25)
	PEND(Z3, Z0, Z11, Z1, Z2, Z6, Z7, Z8, Z9)
	PEND(Z19, Z28, Z27, Z17, Z18, Z22, Z23, Z24, Z25)
	ADDQ $112, SI
	ADDQ $640, DI
	ADDQ $128, R8
	ADDQ $64, R9
	SUBQ $4, CX
	JGE  ptq1_two
ptq1_tail:
	VADDPS Z28, Z0, Z0
	ADDQ $4, CX
	CMPQ CX, $2
	JLT  ptq1_half
	PUNIT(K3)
	ADDQ $56, SI
	ADDQ $320, DI
	ADDQ $64, R8
	ADDQ $32, R9
	SUBQ $2, CX
ptq1_half:
	CMPQ CX, $1
	JNE  ptq1_done
	PUNIT(K4)
ptq1_done:
	HSUM256
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func tq1AVX512(w *byte, nb int, q *int8, c *int32, ds *float32) float32
//
// TQ1_0's slot layout, with one Q8_K scale (ds) and one correction (c)
// per block: the five levels of the whole block share them. The block's
// scale d·ds is a scalar, converted and multiplied in an XMM and kept in a
// stack slot, from which the FMA broadcasts it (cheaper than converting
// and multiplying a whole ZMM of it).
TEXT ·tq1AVX512(SB), NOSPLIT, $8-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ c+24(FP), R8
	MOVQ ds+32(FP), R9
	MOVQ $0x000fffffffffffff, AX
	KMOVQ AX, K3
	VPXORD Z0, Z0, Z0
	MOVL $3, AX
	VPBROADCASTD AX, Z16
	SUBQ $2, CX
	JLT  tq1_tail
tq1_two:
	VMOVDQU8.Z (SI), K3, Z4
	VMOVDQU8.Z 54(SI), K3, Z20
	VPBROADCASTW 52(SI), X3
	VPBROADCASTW 106(SI), X19
	VCVTPH2PS X3, X3
	VCVTPH2PS X19, X19
	VMULSS (R9), X3, X3
	VMULSS 4(R9), X19, X19
	VMOVSS X3, s-8(SP)
	VMOVSS X19, s-4(SP)
	VPXORD Z1, Z1, Z1
	VPXORD Z17, Z17, Z17
	VMOVD (R8), X2
	VMOVD 4(R8), X18
	VMOVDQU64 (DI), Z10
	VMOVDQU64 320(DI), Z24
	VMOVDQU64 64(DI), Z11
	VMOVDQU64 384(DI), Z25
	VMOVDQU64 128(DI), Z12
	VMOVDQU64 448(DI), Z26
	VMOVDQU64 192(DI), Z13
	VMOVDQU64 512(DI), Z27
	VMOVDQU64 256(DI), Z14
	VMOVDQU64 576(DI), Z28
	VPDPBUSD Z10, Z4, Z1
	VPDPBUSD Z24, Z20, Z17
	VPADDB Z4, Z4, Z5
	VPADDB Z20, Z20, Z21
	VPADDB Z5, Z4, Z4
	VPADDB Z21, Z20, Z20
	VPDPBUSD Z10, Z4, Z2
	VPDPBUSD Z24, Z20, Z18
	VPDPBUSD Z11, Z4, Z1
	VPDPBUSD Z25, Z20, Z17
	VPADDB Z4, Z4, Z5
	VPADDB Z20, Z20, Z21
	VPADDB Z5, Z4, Z4
	VPADDB Z21, Z20, Z20
	VPDPBUSD Z11, Z4, Z2
	VPDPBUSD Z25, Z20, Z18
	VPDPBUSD Z12, Z4, Z1
	VPDPBUSD Z26, Z20, Z17
	VPADDB Z4, Z4, Z5
	VPADDB Z20, Z20, Z21
	VPADDB Z5, Z4, Z4
	VPADDB Z21, Z20, Z20
	VPDPBUSD Z12, Z4, Z2
	VPDPBUSD Z26, Z20, Z18
	VPDPBUSD Z13, Z4, Z1
	VPDPBUSD Z27, Z20, Z17
	VPADDB Z4, Z4, Z5
	VPADDB Z20, Z20, Z21
	VPADDB Z5, Z4, Z4
	VPADDB Z21, Z20, Z20
	VPDPBUSD Z13, Z4, Z2
	VPDPBUSD Z27, Z20, Z18
	VPDPBUSD Z14, Z4, Z1
	VPDPBUSD Z28, Z20, Z17
	VPADDB Z4, Z4, Z5
	VPADDB Z20, Z20, Z21
	VPADDB Z5, Z4, Z4
	VPADDB Z21, Z20, Z20
	VPDPBUSD Z14, Z4, Z2
	VPDPBUSD Z28, Z20, Z18
	VPMULLD Z16, Z1, Z6
	VPMULLD Z16, Z17, Z22
	VPSUBD Z2, Z6, Z6
	VPSUBD Z18, Z22, Z22
	VCVTDQ2PS Z6, Z6
	VCVTDQ2PS Z22, Z22
	VFMADD231PS.BCST s-8(SP), Z6, Z0
	VFMADD231PS.BCST s-4(SP), Z22, Z0
	ADDQ $108, SI
	ADDQ $640, DI
	ADDQ $8, R8
	ADDQ $8, R9
	SUBQ $2, CX
	JGE  tq1_two
tq1_tail:
	CMPQ CX, $-1
	JNE  tq1_done
	VMOVDQU8.Z (SI), K3, Z4
	VPBROADCASTW 52(SI), X3
	VCVTPH2PS X3, X3
	VMULSS (R9), X3, X3
	VMOVSS X3, s-8(SP)
	VPXORD Z1, Z1, Z1
	VMOVD (R8), X2
	VMOVDQU64 (DI), Z10
	VMOVDQU64 64(DI), Z11
	VMOVDQU64 128(DI), Z12
	VMOVDQU64 192(DI), Z13
	VMOVDQU64 256(DI), Z14
	VPDPBUSD Z10, Z4, Z1
	VPADDB Z4, Z4, Z5
	VPADDB Z5, Z4, Z4
	VPDPBUSD Z10, Z4, Z2
	VPDPBUSD Z11, Z4, Z1
	VPADDB Z4, Z4, Z5
	VPADDB Z5, Z4, Z4
	VPDPBUSD Z11, Z4, Z2
	VPDPBUSD Z12, Z4, Z1
	VPADDB Z4, Z4, Z5
	VPADDB Z5, Z4, Z4
	VPDPBUSD Z12, Z4, Z2
	VPDPBUSD Z13, Z4, Z1
	VPADDB Z4, Z4, Z5
	VPADDB Z5, Z4, Z4
	VPDPBUSD Z13, Z4, Z2
	VPDPBUSD Z14, Z4, Z1
	VPADDB Z4, Z4, Z5
	VPADDB Z5, Z4, Z4
	VPDPBUSD Z14, Z4, Z2
	VPMULLD Z16, Z1, Z6
	VPSUBD Z2, Z6, Z6
	VCVTDQ2PS Z6, Z6
	VFMADD231PS.BCST s-8(SP), Z6, Z0
tq1_done:
	HSUM256
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET
