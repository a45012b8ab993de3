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
// subtraction, also with two rows) and added, times its scales, into Z0;
// the result is Z0/256 (exact). The second row of a pair works the same
// way in Z17 and up, into Z28.

// HSUM256 sums the lanes of Z0 into X0, times 1/256 (clobbers Z1).
#define HSUM256 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS   Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS   X1, X0, X0 \
	VMOVHLPS X0, X1, X1 \
	VADDPS   X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS   X1, X0, X0 \
	VMULSS   inv256<>(SB), X0, X0

DATA inv256<>+0(SB)/4, $0x3b800000
GLOBL inv256<>(SB), RODATA|NOPTR, $4

// The row kernels take nr rows of rb bytes each from w on and store one
// product per row into dst[0:nr]. Looping over the rows here saves a Go
// call and its setup per row. Rows go in pairs, row i with row i + nr/2
// (the last row of an odd count alone, after the second half): the two
// rows share every activation load, and each row of a pair is one long
// sequential stream, which the hardware prefetcher follows (adjacent rows
// made short, jumping streams, slower from memory in the plane kernels).
// Both rows of a pair compute exactly what a lone row does, in the same
// order, so a row's product does not depend on how it is reached.

// TPFDIST is how far ahead of the weights the row kernels prefetch.
#define TPFDIST 1024

// TSETUP loads the row kernels' common arguments: R11 the first row, AX
// rb, R12 dst (at dstoff(FP)), R10 the number of pairs (nr/2), BX the distance between a
// pair's rows (R10·rb) and R13 that of their products (R10·4).
#define TSETUP(dstoff) \
	MOVQ  w+0(FP), R11 \
	MOVQ  rb+8(FP), AX \
	MOVQ  nr+16(FP), R10 \
	MOVQ  dst+dstoff(FP), R12 \
	SHRQ  $1, R10 \
	MOVQ  R10, BX \
	IMULQ AX, BX \
	MOVQ  R10, R13 \
	SHLQ  $2, R13

// TPAIRSTORE stores the products of a pair (Z0, Z28) at (R12) and
// R13 bytes on, and advances R12.
#define TPAIRSTORE \
	HSUM256 \
	MOVSS   X0, (R12) \
	VMOVAPS Z28, Z0 \
	HSUM256 \
	MOVSS   X0, (R12)(R13*1) \
	ADDQ    $4, R12

// ptq1dperm: VPERMW indexes that put the fp16 scale of each lane's block
// of a pair of PTQ1_0 blocks (word 13 or 27) in word l of lane l: words
// 0–6 and 14 from block 0, 7–13 and 15 from block 1.
DATA ptq1dperm<>+0(SB)/8, $0x000d000d000d000d
DATA ptq1dperm<>+8(SB)/8, $0x001b000d000d000d
DATA ptq1dperm<>+16(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+24(SB)/8, $0x001b000d001b001b
DATA ptq1dperm<>+32(SB)/8, $0
DATA ptq1dperm<>+40(SB)/8, $0
DATA ptq1dperm<>+48(SB)/8, $0
DATA ptq1dperm<>+56(SB)/8, $0
GLOBL ptq1dperm<>(SB), RODATA|NOPTR, $64

// The PTQ1_0 kernel takes a pair of blocks as one unit, in the pair layout
// of trit.go. PLOAD loads the 56 bytes of a pair at (base) into W (K: an
// odd last block) and the weight scale of each lane's block into S (SY:
// its YMM).
#define PLOAD(base, K, W, S, SY) \
	VMOVDQU8.Z (base), K, W \
	VPERMW W, Z15, S \
	VCVTPH2PS SY, S

// PSTART starts the sums of the three level groups: A0–A2 (the p_n terms)
// at zero, B0 (the p_(n+1) terms of group 0) at the corrections at (R8),
// B1 and B2 at zero.
#define PSTART(A0, B0, A1, B1, A2, B2) \
	VPXORD A0, A0, A0 \
	VPXORD A1, A1, A1 \
	VPXORD A2, A2, A2 \
	VPXORD B1, B1, B1 \
	VPXORD B2, B2, B2 \
	VMOVDQU32 (R8), B0

// LEVEL adds one level of one row: the activations in Z10 times p_n (in
// W) into A and times p_(n+1) into B, leaving p_(n+1) in W (T: scratch).
#define LEVEL(W, T, A, B) \
	VPDPBUSD Z10, W, A \
	VPADDB W, W, T \
	VPADDB T, W, W \
	VPDPBUSD Z10, W, B

// LEVEL2 loads the activations at qoff(DI) into Z10 and adds that level
// of a pair of rows: the first with its weights in Z4 into A and B, the
// second with its weights in Z20 into A2 and B2.
#define LEVEL2(qoff, A, B, A2, B2) \
	VMOVDQU64 qoff(DI), Z10 \
	LEVEL(Z4, Z5, A, B) \
	LEVEL(Z20, Z21, A2, B2)

// PEND forms 3·A − B of each level group, sums them times the groups'
// lane scales at (R9) and adds that into ACC times the weight scales S.
#define PEND(S, ACC, A0, B0, A1, B1, A2, B2) \
	VPMULLD Z16, A0, A0 \
	VPMULLD Z16, A1, A1 \
	VPMULLD Z16, A2, A2 \
	VPSUBD B0, A0, A0 \
	VPSUBD B1, A1, A1 \
	VPSUBD B2, A2, A2 \
	VCVTDQ2PS A0, A0 \
	VCVTDQ2PS A1, A1 \
	VCVTDQ2PS A2, A2 \
	VMULPS (R9), A0, A0 \
	VFMADD231PS 64(R9), A1, A0 \
	VFMADD231PS 128(R9), A2, A0 \
	VFMADD231PS S, A0, ACC

// The loop over a pair of rows takes three units of each at a time, six
// units in all. To fit them in the registers, a unit takes its level
// groups one after the other: group 0 sums in Y (the p_n terms) and C,
// and becomes the unit's float sum in Y; groups 1 and 2 sum in C and D,
// reused, and are added into Y in the order PEND adds them; the weight
// scales are loaded last, into W. Unit k of the row at SI or DX keeps W,
// Y, C and D in: SI 0: Z4, Z1–Z3; DX 0: Z20, Z17–Z19; SI 1: Z8–Z11; DX 1:
// Z25, Z24, Z26, Z27; SI 2: Z6, Z7, Z21, Z22; DX 2: Z23, Z29–Z31.

// QLEVEL is LEVEL with the activations in Q.
#define QLEVEL(Q, W, A, B) \
	VPDPBUSD Q, W, A \
	VPADDB W, W, Z5 \
	VPADDB Z5, W, W \
	VPDPBUSD Q, W, B

// SIXLEVELY and SIXLEVELC load the activations of level qoff/64 of the
// three units and add it into Y and C, or C and D, of all six.
#define SIXLEVELY(qoff) \
	VMOVDQU64 qoff(DI), Z12 \
	VMOVDQU64 qoff+320(DI), Z13 \
	VMOVDQU64 qoff+640(DI), Z14 \
	QLEVEL(Z12, Z4, Z1, Z2) \
	QLEVEL(Z12, Z20, Z17, Z18) \
	QLEVEL(Z13, Z8, Z9, Z10) \
	QLEVEL(Z13, Z25, Z24, Z26) \
	QLEVEL(Z14, Z6, Z7, Z21) \
	QLEVEL(Z14, Z23, Z29, Z30)

#define SIXLEVELC(qoff) \
	VMOVDQU64 qoff(DI), Z12 \
	VMOVDQU64 qoff+320(DI), Z13 \
	VMOVDQU64 qoff+640(DI), Z14 \
	QLEVEL(Z12, Z4, Z2, Z3) \
	QLEVEL(Z12, Z20, Z18, Z19) \
	QLEVEL(Z13, Z8, Z10, Z11) \
	QLEVEL(Z13, Z25, Z26, Z27) \
	QLEVEL(Z14, Z6, Z21, Z22) \
	QLEVEL(Z14, Z23, Z30, Z31)

// QFOLD forms 3·X − B, as a float, in X.
#define QFOLD(X, B) \
	VPMULLD Z16, X, X \
	VPSUBD B, X, X \
	VCVTDQ2PS X, X

// SIXSTART loads the weights of the six units and starts their sums of
// group 0 (Y at zero, C at the corrections).
#define SIXSTART \
	VMOVDQU8.Z 0(SI), K3, Z4 \
	VMOVDQU8.Z 0(DX), K3, Z20 \
	VMOVDQU8.Z 56(SI), K3, Z8 \
	VMOVDQU8.Z 56(DX), K3, Z25 \
	VMOVDQU8.Z 112(SI), K3, Z6 \
	VMOVDQU8.Z 112(DX), K3, Z23 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z29, Z29, Z29 \
	VMOVDQU32 0(R8), Z2 \
	VMOVDQU32 0(R8), Z18 \
	VMOVDQU32 64(R8), Z10 \
	VMOVDQU32 64(R8), Z26 \
	VMOVDQU32 128(R8), Z21 \
	VMOVDQU32 128(R8), Z30

// SIXFOLD0 makes group 0's sums the float sums Y, times their lane scales.
#define SIXFOLD0 \
	QFOLD(Z1, Z2) \
	QFOLD(Z17, Z18) \
	QFOLD(Z9, Z10) \
	QFOLD(Z24, Z26) \
	QFOLD(Z7, Z21) \
	QFOLD(Z29, Z30) \
	VMULPS 0(R9), Z1, Z1 \
	VMULPS 0(R9), Z17, Z17 \
	VMULPS 192(R9), Z9, Z9 \
	VMULPS 192(R9), Z24, Z24 \
	VMULPS 384(R9), Z7, Z7 \
	VMULPS 384(R9), Z29, Z29

// SIXZERO zeroes C and D of the six units.
#define SIXZERO \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z31, Z31, Z31

// SIXGROUP folds the sums of level group g (in C and D) and adds them
// times their lane scales into Y.
#define SIXGROUP(g) \
	QFOLD(Z2, Z3) \
	QFOLD(Z18, Z19) \
	QFOLD(Z10, Z11) \
	QFOLD(Z26, Z27) \
	QFOLD(Z21, Z22) \
	QFOLD(Z30, Z31) \
	VFMADD231PS 0+64*g(R9), Z2, Z1 \
	VFMADD231PS 0+64*g(R9), Z18, Z17 \
	VFMADD231PS 192+64*g(R9), Z10, Z9 \
	VFMADD231PS 192+64*g(R9), Z26, Z24 \
	VFMADD231PS 384+64*g(R9), Z21, Z7 \
	VFMADD231PS 384+64*g(R9), Z30, Z29

// SIXEND adds each unit's Y times its weight scales into Z0 (row at SI)
// or Z28 (DX), unit 0 first.
#define SIXEND \
	VMOVDQU8.Z 0(SI), K3, Z4 \
	VPERMW Z4, Z15, Z4 \
	VCVTPH2PS Y4, Z4 \
	VFMADD231PS Z4, Z1, Z0 \
	VMOVDQU8.Z 0(DX), K3, Z20 \
	VPERMW Z20, Z15, Z20 \
	VCVTPH2PS Y20, Z20 \
	VFMADD231PS Z20, Z17, Z28 \
	VMOVDQU8.Z 56(SI), K3, Z8 \
	VPERMW Z8, Z15, Z8 \
	VCVTPH2PS Y8, Z8 \
	VFMADD231PS Z8, Z9, Z0 \
	VMOVDQU8.Z 56(DX), K3, Z25 \
	VPERMW Z25, Z15, Z25 \
	VCVTPH2PS Y25, Z25 \
	VFMADD231PS Z25, Z24, Z28 \
	VMOVDQU8.Z 112(SI), K3, Z6 \
	VPERMW Z6, Z15, Z6 \
	VCVTPH2PS Y6, Z6 \
	VFMADD231PS Z6, Z7, Z0 \
	VMOVDQU8.Z 112(DX), K3, Z23 \
	VPERMW Z23, Z15, Z23 \
	VCVTPH2PS Y23, Z23 \
	VFMADD231PS Z23, Z29, Z28

// PPAIR adds one unit of the pair of rows at SI and DX into Z0 and Z28.
#define PPAIR(K) \
	PLOAD(SI, K, Z4, Z3, Y3) \
	PLOAD(DX, K, Z20, Z19, Y19) \
	PSTART(Z1, Z2, Z6, Z7, Z8, Z9) \
	PSTART(Z17, Z18, Z22, Z23, Z24, Z25) \
	LEVEL2(0, Z1, Z2, Z17, Z18) \
	LEVEL2(64, Z1, Z2, Z17, Z18) \
	LEVEL2(128, Z6, Z7, Z22, Z23) \
	LEVEL2(192, Z6, Z7, Z22, Z23) \
	LEVEL2(256, Z8, Z9, Z24, Z25) \
	PEND(Z3, Z0, Z1, Z2, Z6, Z7, Z8, Z9) \
	PEND(Z19, Z28, Z17, Z18, Z22, Z23, Z24, Z25)

// PONE adds one unit of the row at SI into Z0.
#define PONE(K) \
	PLOAD(SI, K, Z4, Z3, Y3) \
	PSTART(Z1, Z2, Z6, Z7, Z8, Z9) \
	VMOVDQU64 0(DI), Z10 \
	LEVEL(Z4, Z5, Z1, Z2) \
	VMOVDQU64 64(DI), Z10 \
	LEVEL(Z4, Z5, Z1, Z2) \
	VMOVDQU64 128(DI), Z10 \
	LEVEL(Z4, Z5, Z6, Z7) \
	VMOVDQU64 192(DI), Z10 \
	LEVEL(Z4, Z5, Z6, Z7) \
	VMOVDQU64 256(DI), Z10 \
	LEVEL(Z4, Z5, Z8, Z9) \
	PEND(Z3, Z0, Z1, Z2, Z6, Z7, Z8, Z9)

// PROWSTART points DI, R8 and R9 at the first pair's activations and CX
// at the number of whole pairs of blocks (nb/2).
#define PROWSTART \
	MOVQ q+32(FP), DI \
	MOVQ c+40(FP), R8 \
	MOVQ ds+48(FP), R9 \
	MOVQ nb+24(FP), CX \
	SHRQ $1, CX

// PNEXT advances the activations by a unit.
#define PNEXT \
	ADDQ $320, DI \
	ADDQ $64, R8 \
	ADDQ $192, R9

// func ptq1pAVX512(w *byte, rb, nr, nb int, q *int8, c *int32, ds *float32, dst *float32)
//
// PTQ1_0, rows of nb blocks. Each int32 lane holds bytes 4j..4j+3 of one
// block, whose levels fall in up to three activation blocks: levels 0–1,
// 2–3 and 4 (the level groups of trit.go) keep separate sums, each with
// its lanes' scales (ds, three vectors per pair) and group 0 with the
// corrections (c, a vector per pair). An odd last block is a unit with
// an empty second half (mask K4). A pair of rows takes three units of
// each at a time (measured ≈ 10 % faster than one), then one at a time;
// a lone row takes one unit at a time.
TEXT ·ptq1pAVX512(SB), NOSPLIT, $0-64
	TSETUP(56)
	MOVQ $0x00ffffffffffffff, DX
	KMOVQ DX, K3
	MOVQ $0x0fffffff, DX
	KMOVQ DX, K4
	VMOVDQU64 ptq1dperm<>(SB), Z15
	MOVL $3, DX
	VPBROADCASTD DX, Z16
	TESTQ R10, R10
	JZ    ptq1p_odd

ptq1p_row:
	MOVQ   R11, SI
	LEAQ   (R11)(BX*1), DX
	PROWSTART
	VPXORD Z0, Z0, Z0
	VPXORD Z28, Z28, Z28
	SUBQ   $3, CX
	JLT    ptq1p_pairlast

ptq1p_three:
	PREFETCHT0 TPFDIST(SI)
	PREFETCHT0 TPFDIST(DX)
	PREFETCHT0 TPFDIST+64(SI)
	PREFETCHT0 TPFDIST+64(DX)
	PREFETCHT0 TPFDIST+128(SI)
	PREFETCHT0 TPFDIST+128(DX)
	SIXSTART
	SIXLEVELY(0)
	SIXLEVELY(64)
	SIXFOLD0
	SIXZERO
	SIXLEVELC(128)
	SIXLEVELC(192)
	SIXGROUP(1)
	SIXZERO
	SIXLEVELC(256)
	SIXGROUP(2)
	SIXEND
	ADDQ $168, SI
	ADDQ $168, DX
	ADDQ $960, DI
	ADDQ $192, R8
	ADDQ $576, R9
	SUBQ $3, CX
	JGE  ptq1p_three

ptq1p_pairlast:
	ADDQ $3, CX
	JZ   ptq1p_pairhalf

ptq1p_pair:
	PREFETCHT0 TPFDIST(SI)
	PREFETCHT0 TPFDIST(DX)
	PPAIR(K3)
	ADDQ $56, SI
	ADDQ $56, DX
	PNEXT
	DECQ CX
	JNZ  ptq1p_pair

ptq1p_pairhalf:
	MOVQ  nb+24(FP), CX
	TESTQ $1, CX
	JZ    ptq1p_pairdone
	PPAIR(K4)

ptq1p_pairdone:
	TPAIRSTORE
	ADDQ AX, R11
	DECQ R10
	JNZ  ptq1p_row

ptq1p_odd:
	MOVQ  nr+16(FP), CX
	TESTQ $1, CX
	JZ    ptq1p_end
	LEAQ  (R11)(BX*1), SI
	ADDQ  R13, R12
	PROWSTART
	VPXORD Z0, Z0, Z0
	TESTQ  CX, CX
	JZ     ptq1p_onehalf

ptq1p_one:
	PREFETCHT0 TPFDIST(SI)
	PONE(K3)
	ADDQ $56, SI
	PNEXT
	DECQ CX
	JNZ  ptq1p_one

ptq1p_onehalf:
	MOVQ  nb+24(FP), CX
	TESTQ $1, CX
	JZ    ptq1p_onedone
	PONE(K4)

ptq1p_onedone:
	HSUM256
	MOVSS X0, (R12)

ptq1p_end:
	VZEROUPPER
	RET

// TQ1_0's slot layout has one Q8_K scale (ds) and one correction (c) per
// block: the five levels of the whole block share them. TSCALE puts the
// scale d·ds of block k (its weights at base + 54k), converted and
// multiplied as a scalar (cheaper than a whole ZMM of it), in the stack
// slot at soff(SP), from which the FMA of TEND broadcasts it; it clobbers
// X (the low part of Z).
#define TSCALE(k, base, X, soff) \
	VPBROADCASTW 54*k+52(base), X \
	VCVTPH2PS X, X \
	VMULSS 4*k(R9), X, X \
	VMOVSS X, soff(SP)

// TSTART loads the 52 code bytes of block k into W and starts the sums:
// A (the p_n terms) at zero, B (BX: its XMM) at the block's correction.
#define TSTART(k, base, W, A, BX) \
	VMOVDQU8.Z 54*k(base), K3, W \
	VPXORD A, A, A \
	VMOVD 4*k(R8), BX

// TEND adds (3·A − B)·scale into ACC (T: scratch).
#define TEND(soff, A, B, T, ACC) \
	VPMULLD Z16, A, T \
	VPSUBD B, T, T \
	VCVTDQ2PS T, T \
	VFMADD231PS.BCST soff(SP), T, ACC

// TROWSTART points DI, R8 and R9 at the first block's activations and CX
// at the number of blocks.
#define TROWSTART \
	MOVQ q+32(FP), DI \
	MOVQ c+40(FP), R8 \
	MOVQ ds+48(FP), R9 \
	MOVQ nb+24(FP), CX

// TNEXT advances the activations by a block.
#define TNEXT \
	ADDQ $320, DI \
	ADDQ $4, R8 \
	ADDQ $4, R9

// HLEVEL6 adds level qoff/64 of three blocks of a pair of rows: block k
// (activations 320k bytes on) with weights in Z4, Z6, Z7 (row at SI) and
// Z20, Z22, Z23 (DX) into the sums in Z1, Z2; Z8, Z9; Z12, Z14 and
// Z17, Z18; Z24, Z25; Z26, Z27.
#define HLEVEL6(qoff) \
	VMOVDQU64 qoff(DI), Z10 \
	VMOVDQU64 qoff+320(DI), Z11 \
	VMOVDQU64 qoff+640(DI), Z13 \
	QLEVEL(Z10, Z4, Z1, Z2) \
	QLEVEL(Z10, Z20, Z17, Z18) \
	QLEVEL(Z11, Z6, Z8, Z9) \
	QLEVEL(Z11, Z22, Z24, Z25) \
	QLEVEL(Z13, Z7, Z12, Z14) \
	QLEVEL(Z13, Z23, Z26, Z27)

// func tq1pAVX512(w *byte, rb, nr, nb int, q *int8, c *int32, ds *float32, dst *float32)
//
// TQ1_0, rows of nb blocks (nb ≥ 1). The loop over a pair of rows takes
// three blocks of each at a time (measured ≈ 8–10 % faster than one: more
// independent work in flight), then one at a time; a lone row takes one
// block at a time.
TEXT ·tq1pAVX512(SB), NOSPLIT, $24-64
	TSETUP(56)
	MOVQ  $0x000fffffffffffff, DX
	KMOVQ DX, K3
	MOVL  $3, DX
	VPBROADCASTD DX, Z16
	TESTQ R10, R10
	JZ    tq1p_odd

tq1p_row:
	MOVQ   R11, SI
	LEAQ   (R11)(BX*1), DX
	TROWSTART
	VPXORD Z0, Z0, Z0
	VPXORD Z28, Z28, Z28
	SUBQ   $3, CX
	JLT    tq1p_last

tq1p_three:
	PREFETCHT0 TPFDIST(SI)
	PREFETCHT0 TPFDIST(DX)
	PREFETCHT0 TPFDIST+64(SI)
	PREFETCHT0 TPFDIST+64(DX)
	PREFETCHT0 TPFDIST+128(SI)
	PREFETCHT0 TPFDIST+128(DX)
	TSCALE(0, SI, X3, s-24)
	TSCALE(0, DX, X19, s-20)
	TSCALE(1, SI, X29, s-16)
	TSCALE(1, DX, X31, s-12)
	TSCALE(2, SI, X30, s-8)
	TSCALE(2, DX, X15, s-4)
	TSTART(0, SI, Z4, Z1, X2)
	TSTART(0, DX, Z20, Z17, X18)
	TSTART(1, SI, Z6, Z8, X9)
	TSTART(1, DX, Z22, Z24, X25)
	TSTART(2, SI, Z7, Z12, X14)
	TSTART(2, DX, Z23, Z26, X27)
	HLEVEL6(0)
	HLEVEL6(64)
	HLEVEL6(128)
	HLEVEL6(192)
	HLEVEL6(256)
	TEND(s-24, Z1, Z2, Z21, Z0)
	TEND(s-20, Z17, Z18, Z5, Z28)
	TEND(s-16, Z8, Z9, Z21, Z0)
	TEND(s-12, Z24, Z25, Z5, Z28)
	TEND(s-8, Z12, Z14, Z21, Z0)
	TEND(s-4, Z26, Z27, Z5, Z28)
	ADDQ $162, SI
	ADDQ $162, DX
	ADDQ $960, DI
	ADDQ $12, R8
	ADDQ $12, R9
	SUBQ $3, CX
	JGE  tq1p_three

tq1p_last:
	ADDQ $3, CX
	JZ   tq1p_store

tq1p_pair:
	PREFETCHT0 TPFDIST(SI)
	PREFETCHT0 TPFDIST(DX)
	TSCALE(0, SI, X3, s-24)
	TSCALE(0, DX, X19, s-20)
	TSTART(0, SI, Z4, Z1, X2)
	TSTART(0, DX, Z20, Z17, X18)
	LEVEL2(0, Z1, Z2, Z17, Z18)
	LEVEL2(64, Z1, Z2, Z17, Z18)
	LEVEL2(128, Z1, Z2, Z17, Z18)
	LEVEL2(192, Z1, Z2, Z17, Z18)
	LEVEL2(256, Z1, Z2, Z17, Z18)
	TEND(s-24, Z1, Z2, Z6, Z0)
	TEND(s-20, Z17, Z18, Z22, Z28)
	ADDQ $54, SI
	ADDQ $54, DX
	TNEXT
	DECQ CX
	JNZ  tq1p_pair

tq1p_store:
	TPAIRSTORE
	ADDQ AX, R11
	DECQ R10
	JNZ  tq1p_row

tq1p_odd:
	MOVQ  nr+16(FP), CX
	TESTQ $1, CX
	JZ    tq1p_end
	LEAQ  (R11)(BX*1), SI
	ADDQ  R13, R12
	TROWSTART
	VPXORD Z0, Z0, Z0

tq1p_one:
	PREFETCHT0 TPFDIST(SI)
	TSCALE(0, SI, X3, s-24)
	TSTART(0, SI, Z4, Z1, X2)
	VMOVDQU64 0(DI), Z10
	LEVEL(Z4, Z5, Z1, Z2)
	VMOVDQU64 64(DI), Z10
	LEVEL(Z4, Z5, Z1, Z2)
	VMOVDQU64 128(DI), Z10
	LEVEL(Z4, Z5, Z1, Z2)
	VMOVDQU64 192(DI), Z10
	LEVEL(Z4, Z5, Z1, Z2)
	VMOVDQU64 256(DI), Z10
	LEVEL(Z4, Z5, Z1, Z2)
	TEND(s-24, Z1, Z2, Z6, Z0)
	ADDQ $54, SI
	TNEXT
	DECQ CX
	JNZ  tq1p_one

	HSUM256
	MOVSS X0, (R12)

tq1p_end:
	VZEROUPPER
	RET
