//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 trit kernels. A trit comes out of its byte without compares:
// with p_n = b·3ⁿ mod 256 (the level-n byte of b), 3·p_n = 256·t_n + p_(n+1),
// so Σ t_n·a_n = (3·Σ p_n·a_n − Σ p_(n+1)·a_n)/256 exactly. Both sums are
// VPDPBUSDs of the bytes p_n (unsigned) with the activations; p_(n+1) = 3·p_n
// takes two byte adds. The kernels accumulate 256× the products and scale
// the result by 1/256 at the end (exact).

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

// P3(reg): reg = 3·reg per byte (mod 256); clobbers Z5.
#define P3(reg) \
	VPADDB reg, reg, Z5 \
	VPADDB Z5, reg, reg

// ptq1dperm: VPERMW indexes that spread the fp16 scales of a pair of
// PTQ1_0 blocks (words 13 and 27) over the lanes of each block.
DATA ptq1dperm<>+0(SB)/8, $0x000d000d000d000d
DATA ptq1dperm<>+8(SB)/8, $0x001b000d000d000d
DATA ptq1dperm<>+16(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+24(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+32(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+40(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+48(SB)/8, $0x001b001b001b001b
DATA ptq1dperm<>+56(SB)/8, $0x001b001b001b001b
GLOBL ptq1dperm<>(SB), RODATA|NOPTR, $64

// PTQ1PAIR(mask): one pair of blocks (the pair layout of trit.go), the
// weight bytes loaded under mask; each int32 lane is one lane group, so the
// five levels add up in Z1 and Z2 (started from the corrections) before
// the lanes' activation scales and the blocks' weight scales apply.
#define PTQ1PAIR(mask) \
	VMOVDQU8.Z (SI), mask, Z4 \
	VPERMW    Z4, Z15, Z3 \
	VCVTPH2PS Y3, Z3 \
	VMULPS    (R9), Z3, Z3 \
	VPXORD    Z1, Z1, Z1 \
	VMOVDQU32 (R8), Z2 \
	VMOVDQU64 (DI), Z10 \
	VMOVDQU64 64(DI), Z11 \
	VMOVDQU64 128(DI), Z12 \
	VMOVDQU64 192(DI), Z13 \
	VMOVDQU64 256(DI), Z14 \
	VPDPBUSD  Z10, Z4, Z1 \
	P3(Z4) \
	VPDPBUSD  Z10, Z4, Z2 \
	VPDPBUSD  Z11, Z4, Z1 \
	P3(Z4) \
	VPDPBUSD  Z11, Z4, Z2 \
	VPDPBUSD  Z12, Z4, Z1 \
	P3(Z4) \
	VPDPBUSD  Z12, Z4, Z2 \
	VPDPBUSD  Z13, Z4, Z1 \
	P3(Z4) \
	VPDPBUSD  Z13, Z4, Z2 \
	VPDPBUSD  Z14, Z4, Z1 \
	P3(Z4) \
	VPDPBUSD  Z14, Z4, Z2 \
	VPADDD    Z1, Z1, Z6 \
	VPSUBD    Z2, Z6, Z6 \
	VPADDD    Z1, Z6, Z6 \
	VCVTDQ2PS Z6, Z6 \
	VFMADD231PS Z3, Z6, Z0 \
	ADDQ $56, SI \
	ADDQ $320, DI \
	ADDQ $64, R8 \
	ADDQ $64, R9

// func ptq1AVX512(w *byte, nb int, q *int8, c *int32, ds *float32) float32
//
// nb blocks; an odd last block is a pair with an empty second half.
TEXT ·ptq1AVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ c+24(FP), R8
	MOVQ ds+32(FP), R9
	MOVQ $0x00ffffffffffffff, AX
	KMOVQ AX, K3
	MOVQ $0x0fffffff, AX
	KMOVQ AX, K4
	VMOVDQU64 ptq1dperm<>(SB), Z15
	VPXORD Z0, Z0, Z0
	SUBQ $2, CX
	JLT  ptq1_tail
ptq1_pair:
	PTQ1PAIR(K3)
	SUBQ $2, CX
	JGE  ptq1_pair
ptq1_tail:
	CMPQ CX, $-1
	JNE  ptq1_done
	PTQ1PAIR(K4)
ptq1_done:
	HSUM256
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// func tq1AVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
//
// One Q8_K scale per block: the five levels sum into Z1 (the p_n terms,
// started from 256× the block's correction lanes) and Z2 (the p_(n+1)
// terms, started from twice that, so that 3·Z1 − Z2 carries it once).
TEXT ·tq1AVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	MOVQ $0x000fffffffffffff, AX
	KMOVQ AX, K3
	VPXORD Z0, Z0, Z0
tq1_block:
	VMOVDQU8.Z (SI), K3, Z4
	VPSLLD    $8, (R8), Z1
	VPADDD    Z1, Z1, Z2
	VMOVDQU64 (DI), Z10
	VMOVDQU64 64(DI), Z11
	VMOVDQU64 128(DI), Z12
	VMOVDQU64 192(DI), Z13
	VMOVDQU64 256(DI), Z14
	VPDPBUSD  Z10, Z4, Z1
	P3(Z4)
	VPDPBUSD  Z10, Z4, Z2
	VPDPBUSD  Z11, Z4, Z1
	P3(Z4)
	VPDPBUSD  Z11, Z4, Z2
	VPDPBUSD  Z12, Z4, Z1
	P3(Z4)
	VPDPBUSD  Z12, Z4, Z2
	VPDPBUSD  Z13, Z4, Z1
	P3(Z4)
	VPDPBUSD  Z13, Z4, Z2
	VPDPBUSD  Z14, Z4, Z1
	P3(Z4)
	VPDPBUSD  Z14, Z4, Z2
	VPADDD    Z1, Z1, Z6
	VPSUBD    Z2, Z6, Z6
	VPADDD    Z1, Z6, Z6
	VCVTDQ2PS Z6, Z6
	VPBROADCASTW 52(SI), Y3
	VCVTPH2PS Y3, Z3
	VMULPS    (R9), Z3, Z3
	VFMADD231PS Z3, Z6, Z0
	ADDQ $54, SI
	ADDQ $320, DI
	ADDQ $320, R8
	ADDQ $320, R9
	DECQ CX
	JNZ  tq1_block
	HSUM256
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET
