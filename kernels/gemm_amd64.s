//go:build amd64 && !purego

#include "textflag.h"

// gemmAVX512 is the GEMM micro-kernel (see gemm.go and gemmCall): four
// activation rows (int8 slots at R10–R13, blocks at R8, R9, AX, DX)
// against 32 weight rows, two vectors of 16 lanes. Z0–Z7 hold the int32
// sums of the current activation block (row r, vector v in Z(2r+v)),
// Z8–Z15 the weight block's float sums, Z16–Z23 the outputs, Z24/Z25 the
// codes of one slot group. X26–X28 keep gap, blocks and runs.

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

// ACTBLOCK starts the sums of one activation block at its correction −Σq
// and adds its runs of 32 slots (eight slot groups each), then converts
// the sums to float.
#define ACTBLOCK(run) \
	VPBROADCASTD (R8), Z0 \
	VMOVDQA32 Z0, Z1 \
	VPBROADCASTD (R9), Z2 \
	VMOVDQA32 Z2, Z3 \
	VPBROADCASTD (AX), Z4 \
	VMOVDQA32 Z4, Z5 \
	VPBROADCASTD (DX), Z6 \
	VMOVDQA32 Z6, Z7 \
	VMOVQ X28, R14 \
run: \
	GROUP(0, 0) \
	GROUP(4, 128) \
	GROUP(8, 256) \
	GROUP(12, 384) \
	GROUP(16, 512) \
	GROUP(20, 640) \
	GROUP(24, 768) \
	GROUP(28, 896) \
	ADDQ $1024, SI \
	ADDQ $32, R10 \
	ADDQ $32, R11 \
	ADDQ $32, R12 \
	ADDQ $32, R13 \
	DECQ R14 \
	JNZ run \
	VCVTDQ2PS Z0, Z0 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z4, Z4 \
	VCVTDQ2PS Z5, Z5 \
	VCVTDQ2PS Z6, Z6 \
	VCVTDQ2PS Z7, Z7

// SCALE applies op (multiply or multiply-add) with each row's activation
// scale to the block sums, into Z8–Z15, and moves to the next blocks.
#define SCALE(op) \
	op 4(R8), Z0, Z8 \
	op 4(R8), Z1, Z9 \
	op 4(R9), Z2, Z10 \
	op 4(R9), Z3, Z11 \
	op 4(AX), Z4, Z12 \
	op 4(AX), Z5, Z13 \
	op 4(DX), Z6, Z14 \
	op 4(DX), Z7, Z15 \
	ADDQ $8, R8 \
	ADDQ $8, R9 \
	ADDQ $8, AX \
	ADDQ $8, DX

// OUT adds the dst row at DX when BX is set, and stores the two output
// vectors of one row under the lane masks K1, K2.
#define OUT(lo, hi) \
	TESTQ BX, BX \
	JZ 3(PC) \
	VADDPS (DX), lo, K1, lo \
	VADDPS 64(DX), hi, K2, hi \
	VMOVUPS lo, K1, (DX) \
	VMOVUPS hi, K2, 64(DX)

// func gemmAVX512(c *gemmCall)
TEXT ·gemmAVX512(SB), NOSPLIT, $0-8
	MOVQ c+0(FP), DX
	MOVQ 0(DX), SI
	MOVQ 8(DX), DI
	MOVQ 16(DX), CX
	VMOVQ 24(DX), X27
	VMOVQ 32(DX), X28
	VMOVQ 40(DX), X26
	MOVQ 48(DX), R10
	MOVQ 56(DX), R11
	MOVQ 64(DX), R12
	MOVQ 72(DX), R13
	MOVQ 80(DX), R8
	MOVQ 88(DX), R9
	MOVQ 96(DX), AX
	MOVQ 104(DX), DX
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

gemm_wblock:
	VMOVQ X27, BX
	ACTBLOCK(gemm_run0)
	SCALE(VMULPS.BCST)
	DECQ BX
	JZ gemm_wscale

gemm_ablock:
	ACTBLOCK(gemm_run1)
	SCALE(VFMADD231PS.BCST)
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
	VMOVQ X26, BX
	ADDQ BX, R10
	ADDQ BX, R11
	ADDQ BX, R12
	ADDQ BX, R13
	DECQ CX
	JNZ gemm_wblock

	MOVQ c+0(FP), AX
	KMOVW 144(AX), K1
	KMOVW 146(AX), K2
	MOVQ 152(AX), BX
	MOVQ 112(AX), DX
	OUT(Z16, Z17)
	MOVQ 120(AX), DX
	OUT(Z18, Z19)
	MOVQ 128(AX), DX
	OUT(Z20, Z21)
	MOVQ 136(AX), DX
	OUT(Z22, Z23)
	VZEROUPPER
	RET
