//go:build amd64 && !purego

#include "textflag.h"

// The MulAdd tiles keep the four rows of the C tile in registers for the
// whole of k: each step loads one row of B (two vectors), broadcasts the
// four A elements of its column and issues eight fused multiply-adds, each
// into its own accumulator so no addition waits on another.
//
// Registers: DI c, DX ldc bytes, SI A rows 0 and 1 (via R9 = am bytes),
// R12 A rows 2 and 3, R10 ak bytes, BX b, R11 ldb bytes, CX k.

// func mulAdd4x32AVX512(c *float32, ldc int, a *float32, am, ak int, b *float32, ldb, k int)
TEXT ·mulAdd4x32AVX512(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), DX
	SHLQ $2, DX
	MOVQ a+16(FP), SI
	MOVQ am+24(FP), R9
	SHLQ $2, R9
	MOVQ ak+32(FP), R10
	SHLQ $2, R10
	MOVQ b+40(FP), BX
	MOVQ ldb+48(FP), R11
	SHLQ $2, R11
	MOVQ k+56(FP), CX
	LEAQ (SI)(R9*2), R12
	LEAQ (DI)(DX*2), R13

	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS (DI)(DX*1), Z2
	VMOVUPS 64(DI)(DX*1), Z3
	VMOVUPS (R13), Z4
	VMOVUPS 64(R13), Z5
	VMOVUPS (R13)(DX*1), Z6
	VMOVUPS 64(R13)(DX*1), Z7
	TESTQ   CX, CX
	JZ      store512

loop512:
	VMOVUPS      (BX), Z8
	VMOVUPS      64(BX), Z9
	VBROADCASTSS (SI), Z10
	VBROADCASTSS (SI)(R9*1), Z11
	VBROADCASTSS (R12), Z12
	VBROADCASTSS (R12)(R9*1), Z13
	VFMADD231PS  Z10, Z8, Z0
	VFMADD231PS  Z10, Z9, Z1
	VFMADD231PS  Z11, Z8, Z2
	VFMADD231PS  Z11, Z9, Z3
	VFMADD231PS  Z12, Z8, Z4
	VFMADD231PS  Z12, Z9, Z5
	VFMADD231PS  Z13, Z8, Z6
	VFMADD231PS  Z13, Z9, Z7
	ADDQ         R10, SI
	ADDQ         R10, R12
	ADDQ         R11, BX
	DECQ         CX
	JNZ          loop512

store512:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, (DI)(DX*1)
	VMOVUPS Z3, 64(DI)(DX*1)
	VMOVUPS Z4, (R13)
	VMOVUPS Z5, 64(R13)
	VMOVUPS Z6, (R13)(DX*1)
	VMOVUPS Z7, 64(R13)(DX*1)
	VZEROUPPER
	RET

// func mulAdd4x16AVX2(c *float32, ldc int, a *float32, am, ak int, b *float32, ldb, k int)
TEXT ·mulAdd4x16AVX2(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), DX
	SHLQ $2, DX
	MOVQ a+16(FP), SI
	MOVQ am+24(FP), R9
	SHLQ $2, R9
	MOVQ ak+32(FP), R10
	SHLQ $2, R10
	MOVQ b+40(FP), BX
	MOVQ ldb+48(FP), R11
	SHLQ $2, R11
	MOVQ k+56(FP), CX
	LEAQ (SI)(R9*2), R12
	LEAQ (DI)(DX*2), R13

	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (DI)(DX*1), Y2
	VMOVUPS 32(DI)(DX*1), Y3
	VMOVUPS (R13), Y4
	VMOVUPS 32(R13), Y5
	VMOVUPS (R13)(DX*1), Y6
	VMOVUPS 32(R13)(DX*1), Y7
	TESTQ   CX, CX
	JZ      store256

loop256:
	VMOVUPS      (BX), Y8
	VMOVUPS      32(BX), Y9
	VBROADCASTSS (SI), Y10
	VBROADCASTSS (SI)(R9*1), Y11
	VBROADCASTSS (R12), Y12
	VBROADCASTSS (R12)(R9*1), Y13
	VFMADD231PS  Y10, Y8, Y0
	VFMADD231PS  Y10, Y9, Y1
	VFMADD231PS  Y11, Y8, Y2
	VFMADD231PS  Y11, Y9, Y3
	VFMADD231PS  Y12, Y8, Y4
	VFMADD231PS  Y12, Y9, Y5
	VFMADD231PS  Y13, Y8, Y6
	VFMADD231PS  Y13, Y9, Y7
	ADDQ         R10, SI
	ADDQ         R10, R12
	ADDQ         R11, BX
	DECQ         CX
	JNZ          loop256

store256:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(DX*1)
	VMOVUPS Y3, 32(DI)(DX*1)
	VMOVUPS Y4, (R13)
	VMOVUPS Y5, 32(R13)
	VMOVUPS Y6, (R13)(DX*1)
	VMOVUPS Y7, 32(R13)(DX*1)
	VZEROUPPER
	RET
