//go:build amd64 && !purego

#include "textflag.h"

// gemmAVX512 is the GEMM micro-kernel (see gemm.go): four activation rows
// (R10–R13) against 32 weight rows, two vectors of 16 lanes. Z0–Z7 are the
// int32 sums of the current activation block (row r, vector v in Z(2r+v)),
// Z8–Z15 the weight block's float sums, Z16–Z23 the outputs, Z24/Z25 the
// codes of one slot group.

// GROUP multiplies slot group j (the four activation bytes at off) of the
// four rows with the codes at woff.
#define GROUP(off, woff) \
	VMOVDQU32 woff(SI), Z24 \
	VMOVDQU32 woff+64(SI), Z25 \
	VPDPBUSD.BCST off(R10), Z24, Z0 \
	VPDPBUSD.BCST off(R10), Z25, Z1 \
	VPDPBUSD.BCST off(R11), Z24, Z2 \
	VPDPBUSD.BCST off(R11), Z25, Z3 \
	VPDPBUSD.BCST off(R12), Z24, Z4 \
	VPDPBUSD.BCST off(R12), Z25, Z5 \
	VPDPBUSD.BCST off(R13), Z24, Z6 \
	VPDPBUSD.BCST off(R13), Z25, Z7

// ACTBLOCK starts the sums of one 32-slot activation block at −Σq (sz, R8
// bytes from q) and adds its eight slot groups.
#define ACTBLOCK \
	VPBROADCASTD (R10)(R8*1), Z0 \
	VMOVDQA32 Z0, Z1 \
	VPBROADCASTD (R11)(R8*1), Z2 \
	VMOVDQA32 Z2, Z3 \
	VPBROADCASTD (R12)(R8*1), Z4 \
	VMOVDQA32 Z4, Z5 \
	VPBROADCASTD (R13)(R8*1), Z6 \
	VMOVDQA32 Z6, Z7 \
	GROUP(0, 0) \
	GROUP(4, 128) \
	GROUP(8, 256) \
	GROUP(12, 384) \
	GROUP(16, 512) \
	GROUP(20, 640) \
	GROUP(24, 768) \
	GROUP(28, 896) \
	VCVTDQ2PS Z0, Z0 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z4, Z4 \
	VCVTDQ2PS Z5, Z5 \
	VCVTDQ2PS Z6, Z6 \
	VCVTDQ2PS Z7, Z7

// SCALE applies op (multiply or multiply-add) with each row's activation
// scale (ds, R9 bytes from q) to the block sums, into Z8–Z15.
#define SCALE(op) \
	op (R10)(R9*1), Z0, Z8 \
	op (R10)(R9*1), Z1, Z9 \
	op (R11)(R9*1), Z2, Z10 \
	op (R11)(R9*1), Z3, Z11 \
	op (R12)(R9*1), Z4, Z12 \
	op (R12)(R9*1), Z5, Z13 \
	op (R13)(R9*1), Z6, Z14 \
	op (R13)(R9*1), Z7, Z15

#define NEXTBLOCK \
	ADDQ $1024, SI \
	ADDQ $32, R10 \
	ADDQ $32, R11 \
	ADDQ $32, R12 \
	ADDQ $32, R13

// OUT adds the dst row at DX when BX is set, and stores the two output
// vectors of one row under the lane masks K1, K2.
#define OUT(lo, hi) \
	TESTQ BX, BX \
	JZ 2(PC) \
	VADDPS (DX), lo, K1, lo \
	TESTQ BX, BX \
	JZ 2(PC) \
	VADDPS 64(DX), hi, K2, hi \
	VMOVUPS lo, K1, (DX) \
	VMOVUPS hi, K2, 64(DX)

// func gemmAVX512(c *gemmCall)
TEXT ·gemmAVX512(SB), NOSPLIT, $0-8
	MOVQ c+0(FP), AX
	MOVQ 0(AX), SI
	MOVQ 8(AX), DI
	MOVQ 16(AX), CX
	MOVQ 32(AX), R14
	MOVQ 40(AX), R8
	MOVQ 48(AX), R9
	MOVQ 56(AX), R10
	MOVQ 64(AX), R11
	MOVQ 72(AX), R12
	MOVQ 80(AX), R13
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

gemm_wblock:
	MOVQ 24(AX), BX
	ACTBLOCK
	SCALE(VMULPS.BCST)
	NEXTBLOCK
	DECQ BX
	JZ gemm_wscale

gemm_ablock:
	ACTBLOCK
	SCALE(VFMADD231PS.BCST)
	NEXTBLOCK
	DECQ BX
	JNZ gemm_ablock

gemm_wscale:
	VMOVUPS (DI), Z24
	VMOVUPS 64(DI), Z25
	VFMADD231PS Z24, Z8, Z16
	VFMADD231PS Z25, Z9, Z17
	VFMADD231PS Z24, Z10, Z18
	VFMADD231PS Z25, Z11, Z19
	VFMADD231PS Z24, Z12, Z20
	VFMADD231PS Z25, Z13, Z21
	VFMADD231PS Z24, Z14, Z22
	VFMADD231PS Z25, Z15, Z23
	ADDQ $128, DI
	ADDQ R14, R10
	ADDQ R14, R11
	ADDQ R14, R12
	ADDQ R14, R13
	DECQ CX
	JNZ gemm_wblock

	KMOVW 120(AX), K1
	KMOVW 122(AX), K2
	MOVQ 128(AX), BX
	MOVQ 88(AX), DX
	OUT(Z16, Z17)
	MOVQ 96(AX), DX
	OUT(Z18, Z19)
	MOVQ 104(AX), DX
	OUT(Z20, Z21)
	MOVQ 112(AX), DX
	OUT(Z22, Z23)
	VZEROUPPER
	RET
