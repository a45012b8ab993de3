//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// AVX2 step for one activation block: Y2 holds 32 unsigned codes; adds
// d_a·(Σ c·q − s) per lane into Y1 and advances the activation pointers.
#define STEP2 \
	VPMADDUBSW (DI), Y2, Y2 \
	VPMADDWD   Y13, Y2, Y2 \
	VPADDD     (R8), Y2, Y2 \
	VCVTDQ2PS  Y2, Y2 \
	VFMADD231PS (R9), Y2, Y1 \
	ADDQ $32, DI \
	ADDQ $32, R8 \
	ADDQ $32, R9

// AVX-512 step for two activation blocks: Z2 holds 64 unsigned codes.
#define STEP512 \
	VMOVDQU32  (R8), Z3 \
	VPDPBUSD   (DI), Z2, Z3 \
	VCVTDQ2PS  Z3, Z3 \
	VFMADD231PS (R9), Z3, Z1 \
	ADDQ $64, DI \
	ADDQ $64, R8 \
	ADDQ $64, R9

// func q2AVX2(w *byte, nb, kb int, q *int8, sz *int32, ds *float32) float32
TEXT ·q2AVX2(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ kb+16(FP), BX
	MOVQ q+24(FP), DI
	MOVQ sz+32(FP), R8
	MOVQ ds+40(FP), R9
	VMOVDQU shiftq<>(SB), Y15
	VMOVDQU mask3<>(SB), Y14
	VMOVDQU ones16<>(SB), Y13
	VXORPS  Y0, Y0, Y0
q2a_block:
	VXORPS Y1, Y1, Y1
	LEAQ   2(SI), DX
	MOVQ   BX, R10
q2a_k:
	VPBROADCASTQ (DX), Y2
	VPSRLVQ Y15, Y2, Y2
	VPAND   Y14, Y2, Y2
	STEP2
	ADDQ $8, DX
	DECQ R10
	JNZ  q2a_k
	VPBROADCASTW (SI), X3
	VCVTPH2PS X3, Y3
	VFMADD231PS Y3, Y1, Y0
	MOVQ DX, SI
	DECQ CX
	JNZ  q2a_block
	HSUM
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func q2AVX512(w *byte, nb, kb int, q *int8, sz *int32, ds *float32) float32
TEXT ·q2AVX512(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ kb+16(FP), BX
	MOVQ q+24(FP), DI
	MOVQ sz+32(FP), R8
	MOVQ ds+40(FP), R9
	VMOVDQU64 shiftq<>(SB), Z15
	VMOVDQU64 mask3<>(SB), Z14
	VMOVDQU64 permq<>(SB), Z12
	VPXORD  Z0, Z0, Z0
q2z_block:
	VPXORD Z1, Z1, Z1
	LEAQ   2(SI), DX
	MOVQ   BX, R10
q2z_k:
	VMOVDQU (DX), X2
	VPERMQ  Z2, Z12, Z2
	VPSRLVQ Z15, Z2, Z2
	VPANDQ  Z14, Z2, Z2
	STEP512
	ADDQ $16, DX
	SUBQ $2, R10
	JNZ  q2z_k
	VPBROADCASTW (SI), Y3
	VCVTPH2PS Y3, Z3
	VFMADD231PS Z3, Z1, Z0
	MOVQ DX, SI
	DECQ CX
	JNZ  q2z_block
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	HSUM
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func tq2AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
TEXT ·tq2AVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU mask3<>(SB), Y14
	VMOVDQU ones16<>(SB), Y13
	VXORPS  Y0, Y0, Y0
tq2a_block:
	VXORPS Y1, Y1, Y1
	MOVQ   SI, DX
	MOVQ   $2, R10
tq2a_half:
	VMOVDQU (DX), Y5
	VPAND   Y14, Y5, Y2
	STEP2
	VPSRLW  $2, Y5, Y2
	VPAND   Y14, Y2, Y2
	STEP2
	VPSRLW  $4, Y5, Y2
	VPAND   Y14, Y2, Y2
	STEP2
	VPSRLW  $6, Y5, Y2
	VPAND   Y14, Y2, Y2
	STEP2
	ADDQ $32, DX
	DECQ R10
	JNZ  tq2a_half
	VPBROADCASTW 64(SI), X3
	VCVTPH2PS X3, Y3
	VFMADD231PS Y3, Y1, Y0
	ADDQ $66, SI
	DECQ CX
	JNZ  tq2a_block
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// AVX2 Q1_0 unpack of the 32 bits at off(SI) into codes {0,2} in Y2.
#define Q1UNPACK(off) \
	VPBROADCASTD off(SI), Y2 \
	VPSHUFB  Y12, Y2, Y2 \
	VPAND    Y11, Y2, Y2 \
	VPCMPEQB Y11, Y2, Y2 \
	VPAND    Y10, Y2, Y2

// func q1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
TEXT ·q1AVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU ones16<>(SB), Y13
	VMOVDQU q1shuf<>(SB), Y12
	VMOVDQU q1bits<>(SB), Y11
	VMOVDQU twos<>(SB), Y10
	VXORPS  Y0, Y0, Y0
q1a_block:
	VXORPS Y1, Y1, Y1
	Q1UNPACK(2)
	STEP2
	Q1UNPACK(6)
	STEP2
	Q1UNPACK(10)
	STEP2
	Q1UNPACK(14)
	STEP2
	VPBROADCASTW (SI), X3
	VCVTPH2PS X3, Y3
	VFMADD231PS Y3, Y1, Y0
	ADDQ $18, SI
	DECQ CX
	JNZ  q1a_block
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// func q1AVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
TEXT ·q1AVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 twos<>(SB), Z10
	VPXORD  Z0, Z0, Z0
q1z_block:
	VPXORD Z1, Z1, Z1
	KMOVQ  2(SI), K1
	VMOVDQU8.Z Z10, K1, Z2
	STEP512
	KMOVQ  10(SI), K1
	VMOVDQU8.Z Z10, K1, Z2
	STEP512
	VPBROADCASTW (SI), Y3
	VCVTPH2PS Y3, Z3
	VFMADD231PS Z3, Z1, Z0
	ADDQ $18, SI
	DECQ CX
	JNZ  q1z_block
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// AVX2: trits of the bytes in reg (p·3^n) into codes in Y2; Y9/Y8/Y7 hold
// 0x80, 0xD5, 0x2A; clobbers Y5, Y6.
#define TRIT2(reg) \
	VPXOR    Y9, reg, Y5 \
	VPCMPGTB Y8, Y5, Y6 \
	VPCMPGTB Y7, Y5, Y5 \
	VPXOR    Y2, Y2, Y2 \
	VPSUBB   Y6, Y2, Y2 \
	VPSUBB   Y5, Y2, Y2

// AVX2: reg = reg·3 (mod 256 per byte); clobbers Y5.
#define TIMES3(reg) \
	VPADDB reg, reg, Y5 \
	VPADDB Y5, reg, reg

// func ptq1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
TEXT ·ptq1AVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU ones16<>(SB), Y13
	VMOVDQU x80<>(SB), Y9
	VMOVDQU s85<>(SB), Y8
	VMOVDQU s170<>(SB), Y7
	VMOVDQU mask7d<>(SB), Y12
	VXORPS  Y0, Y0, Y0
ptq1a_block:
	VXORPS Y1, Y1, Y1
	VPMASKMOVD (SI), Y12, Y4
	TRIT2(Y4)
	STEP2
	TIMES3(Y4)
	TRIT2(Y4)
	STEP2
	TIMES3(Y4)
	TRIT2(Y4)
	STEP2
	TIMES3(Y4)
	TRIT2(Y4)
	STEP2
	TIMES3(Y4)
	TRIT2(Y4)
	STEP2
	// The sixth level of the layout is padding.
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	VPBROADCASTW 26(SI), X3
	VCVTPH2PS X3, Y3
	VFMADD231PS Y3, Y1, Y0
	ADDQ $28, SI
	DECQ CX
	JNZ  ptq1a_block
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// func tq1AVX2(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
TEXT ·tq1AVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU ones16<>(SB), Y13
	VMOVDQU x80<>(SB), Y9
	VMOVDQU s85<>(SB), Y8
	VMOVDQU s170<>(SB), Y7
	VMOVDQU mask5d<>(SB), Y12
	VXORPS  Y0, Y0, Y0
tq1a_block:
	VXORPS Y1, Y1, Y1
	VMOVDQU (SI), Y4
	VPMASKMOVD 32(SI), Y12, Y10
	MOVQ $5, R10
tq1a_level:
	TRIT2(Y4)
	STEP2
	TRIT2(Y10)
	STEP2
	TIMES3(Y4)
	TIMES3(Y10)
	DECQ R10
	JNZ  tq1a_level
	VPBROADCASTW 52(SI), X3
	VCVTPH2PS X3, Y3
	VFMADD231PS Y3, Y1, Y0
	ADDQ $54, SI
	DECQ CX
	JNZ  tq1a_block
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET
