//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// Constants of the Q6_K kernel (the nibble mask m0f is in consts_amd64.h):
// the bit-4/5 mask, the bias 32 in every byte, and per sub-block group t
// the VPSHUFB control that spreads int16 scale 2t over the low 128-bit lane
// and scale 2t+1 over the high one.

DATA m30<>+0(SB)/8, $0x3030303030303030
DATA m30<>+8(SB)/8, $0x3030303030303030
DATA m30<>+16(SB)/8, $0x3030303030303030
DATA m30<>+24(SB)/8, $0x3030303030303030
GLOBL m30<>(SB), RODATA|NOPTR, $32

DATA b32<>+0(SB)/8, $0x2020202020202020
DATA b32<>+8(SB)/8, $0x2020202020202020
DATA b32<>+16(SB)/8, $0x2020202020202020
DATA b32<>+24(SB)/8, $0x2020202020202020
GLOBL b32<>(SB), RODATA|NOPTR, $32

DATA scshuf<>+0(SB)/8, $0x0100010001000100
DATA scshuf<>+8(SB)/8, $0x0100010001000100
DATA scshuf<>+16(SB)/8, $0x0302030203020302
DATA scshuf<>+24(SB)/8, $0x0302030203020302
DATA scshuf<>+32(SB)/8, $0x0504050405040504
DATA scshuf<>+40(SB)/8, $0x0504050405040504
DATA scshuf<>+48(SB)/8, $0x0706070607060706
DATA scshuf<>+56(SB)/8, $0x0706070607060706
DATA scshuf<>+64(SB)/8, $0x0908090809080908
DATA scshuf<>+72(SB)/8, $0x0908090809080908
DATA scshuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA scshuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA scshuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA scshuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA scshuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA scshuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL scshuf<>(SB), RODATA|NOPTR, $128

// Q8_0 block prologue: |w| in Y3 and the activations, with the sign of w
// moved onto them, in Y4 (activations are never −128, so no overflow).
#define Q8LOAD \
	VMOVDQU 2(SI), Y2 \
	VPABSB  Y2, Y3 \
	VMOVDQU (DI), Y4 \
	VPSIGNB Y2, Y4, Y4

// Q8_0 block epilogue: int32 lanes Y5 times d_w·d_a into Y0.
#define Q8SCALE \
	VCVTDQ2PS Y5, Y5 \
	VPBROADCASTW (SI), X6 \
	VCVTPH2PS X6, Y6 \
	VBROADCASTSS (R9), Y7 \
	VMULPS Y7, Y6, Y6 \
	VFMADD231PS Y6, Y5, Y0 \
	ADDQ $34, SI \
	ADDQ $32, DI \
	ADDQ $4, R9

// func q8AVX2(w *byte, nb int, q *int8, d *float32) float32
TEXT ·q8AVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	VMOVDQU ones16<>(SB), Y13
	VXORPS  Y0, Y0, Y0
	TESTQ   CX, CX
	JZ      q8a_done
q8a_block:
	Q8LOAD
	VPMADDUBSW Y4, Y3, Y5
	VPMADDWD   Y13, Y5, Y5
	Q8SCALE
	DECQ CX
	JNZ  q8a_block
q8a_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func q8AVX512(w *byte, nb int, q *int8, d *float32) float32
TEXT ·q8AVX512(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	VXORPS  Y0, Y0, Y0
	TESTQ   CX, CX
	JZ      q8v_done
q8v_block:
	Q8LOAD
	VPXOR    Y5, Y5, Y5
	VPDPBUSD Y4, Y3, Y5
	Q8SCALE
	DECQ CX
	JNZ  q8v_block
q8v_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// Q6_K group t of one 128-element half: Y5 holds 32 codes 0..63 whose
// activations are at off(DI); adds Σ sc·(c−32)·q per 16 into Y1. The bias
// goes through its own VPMADDUBSW: both products fit int16 unsaturated,
// and so does their difference.
#define Q6DOT(off, t) \
	VMOVDQU off(DI), Y6 \
	VPMADDUBSW Y6, Y5, Y5 \
	VPMADDUBSW Y6, Y13, Y6 \
	VPSUBW Y6, Y5, Y5 \
	VMOVDQU scshuf<>+(32*t)(SB), Y6 \
	VPSHUFB Y6, Y7, Y6 \
	VPMADDWD Y6, Y5, Y5 \
	VPADDD Y5, Y1, Y1

// func q6kAVX2(w *byte, nb int, q *int8, d *float32) float32
//
// d holds one scale per 32 activations (Q8_K's, replicated); the kernel
// reads the first of each 256-block's eight.
TEXT ·q6kAVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	VMOVDQU m0f<>(SB), Y15
	VMOVDQU m30<>(SB), Y14
	VMOVDQU b32<>(SB), Y13
	VXORPS  Y0, Y0, Y0
	TESTQ   CX, CX
	JZ      q6a_done
q6a_block:
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R10  // ql
	LEAQ  128(SI), R11 // qh
	LEAQ  192(SI), R12 // scales
	MOVQ  $2, BX
q6a_half:
	VPMOVSXBW (R12), X7
	VPERMQ    $0x44, Y7, Y7
	VMOVDQU (R10), Y2
	VMOVDQU 32(R10), Y3
	VMOVDQU (R11), Y4
	// t=0: low nibbles of ql[0:32], qh bits 0-1.
	VPAND  Y15, Y2, Y5
	VPSLLW $4, Y4, Y6
	VPAND  Y14, Y6, Y6
	VPOR   Y6, Y5, Y5
	Q6DOT(0, 0)
	// t=1: low nibbles of ql[32:64], qh bits 2-3.
	VPAND  Y15, Y3, Y5
	VPSLLW $2, Y4, Y6
	VPAND  Y14, Y6, Y6
	VPOR   Y6, Y5, Y5
	Q6DOT(32, 1)
	// t=2: high nibbles of ql[0:32], qh bits 4-5.
	VPSRLW $4, Y2, Y5
	VPAND  Y15, Y5, Y5
	VPAND  Y14, Y4, Y6
	VPOR   Y6, Y5, Y5
	Q6DOT(64, 2)
	// t=3: high nibbles of ql[32:64], qh bits 6-7.
	VPSRLW $4, Y3, Y5
	VPAND  Y15, Y5, Y5
	VPSRLW $2, Y4, Y6
	VPAND  Y14, Y6, Y6
	VPOR   Y6, Y5, Y5
	Q6DOT(96, 3)
	ADDQ $64, R10
	ADDQ $32, R11
	ADDQ $8, R12
	ADDQ $128, DI
	DECQ BX
	JNZ  q6a_half
	VCVTDQ2PS Y1, Y1
	VPBROADCASTW 208(SI), X6
	VCVTPH2PS X6, Y6
	VBROADCASTSS (R9), Y7
	VMULPS Y7, Y6, Y6
	VFMADD231PS Y6, Y1, Y0
	ADDQ $210, SI
	ADDQ $32, R9
	DECQ CX
	JNZ  q6a_block
q6a_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
