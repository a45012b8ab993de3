//go:build amd64 && !purego

#include "textflag.h"

// ROUNDQ rounds the float32 lanes of v half away from zero (roundf, as
// quantizeBlock does) and converts them to int32 in place: t = trunc(v),
// plus copysign(1, v) where |v − t| ≥ ½ (v − t is exact). Z28–Z31 hold ½,
// 1, the sign bit and its complement; clobbers Z6–Z8 and K1.
#define ROUNDQ(v) \
	VRNDSCALEPS $11, v, Z6 \
	VSUBPS      Z6, v, Z7 \
	VPANDD      Z31, Z7, Z7 \
	VCMPPS      $29, Z28, Z7, K1 \
	VPANDD      Z30, v, Z8 \
	VPORD       Z29, Z8, Z8 \
	VADDPS      Z8, Z6, K1, Z6 \
	VCVTTPS2DQ  Z6, v

// func quantQ8_0AVX512(x *float32, nb int, q *int8, d *float32, s *int32)
//
// quantizeBlock for nb consecutive 32-value blocks, bit for bit: the same
// float32 operations (max |x|, d = amax/127, 1/d, x·(1/d)), the same
// rounding, and d rounded through fp16 with F16C (ties to even, as
// half.FromFloat32).
TEXT ·quantQ8_0AVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R8
	MOVQ s+32(FP), R9
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z30
	MOVL $0x3f800000, AX
	VPBROADCASTD AX, Z29
	MOVL $0x3f000000, AX
	VPBROADCASTD AX, Z28
	MOVL $0x42fe0000, AX // 127
	VMOVD AX, X9
	VXORPS X10, X10, X10

quant_block:
	VMOVUPS       (SI), Z1
	VMOVUPS       64(SI), Z2
	VPANDD        Z31, Z1, Z3
	VPANDD        Z31, Z2, Z4
	VMAXPS        Z4, Z3, Z3
	VEXTRACTF64X4 $1, Z3, Y4
	VMAXPS        Y4, Y3, Y3
	VEXTRACTF128  $1, Y3, X4
	VMAXPS        X4, X3, X3
	VMOVHLPS      X3, X4, X4
	VMAXPS        X4, X3, X3
	VMOVSHDUP     X3, X4
	VMAXSS        X4, X3, X3
	VDIVSS        X9, X3, X3  // d
	VDIVSS        X3, X29, X5 // 1/d, kept only where d ≠ 0
	VCMPSS        $4, X10, X3, X7
	VANDPS        X7, X5, X5
	VBROADCASTSS  X5, Z5
	VMULPS        Z5, Z1, Z1
	VMULPS        Z5, Z2, Z2
	ROUNDQ(Z1)
	ROUNDQ(Z2)
	VPMOVDB       Z1, (DI)
	VPMOVDB       Z2, 16(DI)
	VPADDD        Z2, Z1, Z1
	VEXTRACTI64X4 $1, Z1, Y2
	VPADDD        Y2, Y1, Y1
	VEXTRACTI128  $1, Y1, X2
	VPADDD        X2, X1, X1
	VPSHUFD       $0x4e, X1, X2
	VPADDD        X2, X1, X1
	VPSHUFD       $0xb1, X1, X2
	VPADDD        X2, X1, X1
	VMOVD         X1, (R9)
	VCVTPS2PH     $0, X3, X3
	VCVTPH2PS     X3, X3
	VMOVSS        X3, (R8)
	ADDQ          $128, SI
	ADDQ          $32, DI
	ADDQ          $4, R8
	ADDQ          $4, R9
	DECQ          CX
	JNZ           quant_block
	VZEROUPPER
	RET

// func planeQ2AVX512(dst, src *int8, nv int)
//
// The planeQ2 bytes of one chunk of 64·nv elements: plane t (16·nv bytes)
// is byte t of every dword of src, which VPMOVDB packs after a shift.
TEXT ·planeQ2AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nv+16(FP), CX
	MOVQ CX, BX
	SHLQ $4, BX          // plane size
	LEAQ (BX)(BX*2), DX  // three planes

planeq2_vec:
	VMOVDQU64 (SI), Z1
	VPSRLD    $8, Z1, Z2
	VPSRLD    $16, Z1, Z3
	VPSRLD    $24, Z1, Z4
	VPMOVDB   Z1, (DI)
	VPMOVDB   Z2, (DI)(BX*1)
	VPMOVDB   Z3, (DI)(BX*2)
	VPMOVDB   Z4, (DI)(DX*1)
	ADDQ      $64, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       planeq2_vec
	VZEROUPPER
	RET

// PLANEQ1(shift, off) packs byte shift/8 of every qword of Z1 into plane
// shift/8 (offset off of the vector's eight bytes).
#define PLANEQ1(shift, off) \
	VPSRLQ  $shift, Z1, Z2 \
	VPMOVQB Z2, off(DI)

// func planeQ1AVX512(dst, src *int8)
//
// The planeQ1 bytes of one 512-element chunk: plane t (64 bytes) is byte t
// of every qword of src.
TEXT ·planeQ1AVX512(SB), NOSPLIT, $0-16
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ $8, CX

planeq1_vec:
	VMOVDQU64 (SI), Z1
	VPMOVQB   Z1, (DI)
	PLANEQ1(8, 64)
	PLANEQ1(16, 128)
	PLANEQ1(24, 192)
	PLANEQ1(32, 256)
	PLANEQ1(40, 320)
	PLANEQ1(48, 384)
	PLANEQ1(56, 448)
	ADDQ      $64, SI
	ADDQ      $8, DI
	DECQ      CX
	JNZ       planeq1_vec
	VZEROUPPER
	RET

// HSUMD stores the sum of the int32 lanes of Z1 at off(R9); clobbers Z2.
#define HSUMD(off) \
	VEXTRACTI64X4 $1, Z1, Y2 \
	VPADDD        Y2, Y1, Y1 \
	VEXTRACTI128  $1, Y1, X2 \
	VPADDD        X2, X1, X1 \
	VPSHUFD       $0x4e, X1, X2 \
	VPADDD        X2, X1, X1 \
	VPSHUFD       $0xb1, X1, X2 \
	VPADDD        X2, X1, X1 \
	VMOVD         X1, off(R9)

// QK16(xo, qo) quantizes the 16 values at xo(SI) by iscale (Z5) into 16
// bytes at qo(DI), clamped to [−128, 127], leaving their int32 values in Z1.
#define QK16(xo, qo) \
	VMULPS     xo(SI), Z5, Z1 \
	VCVTPS2DQ  Z1, Z1 \
	VPMINSD    Z29, Z1, Z1 \
	VPMAXSD    Z28, Z1, Z1 \
	VPMOVDB    Z1, qo(DI)

// QK32(xo, xo2, qo, qo2, so) quantizes one 32-value block (its halves at
// xo and xo2) and stores its sum and the scale (X6) at so(R9) and so(R8).
#define QK32(xo, xo2, qo, qo2, so) \
	QK16(xo, qo) \
	VMOVDQA64 Z1, Z3 \
	QK16(xo2, qo2) \
	VPADDD    Z3, Z1, Z1 \
	HSUMD(so) \
	VMOVSS    X6, so(R8)

// func quantQ8_KAVX512(x *float32, nb int, q *int8, d *float32, s *int32)
//
// quantizeBlockK for nb consecutive 256-value blocks, bit for bit, with the
// scale and the int32 sum of every 32-value block stored as Acts keeps
// them: vmax is the first value of largest magnitude, iscale = −127/vmax,
// q = iscale·x rounded half to even (VCVTPS2DQ under the default rounding
// mode) and clamped.
TEXT ·quantQ8_KAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R8
	MOVQ s+32(FP), R9
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0xc2fe0000, AX // −127
	VMOVD AX, X30
	MOVL $127, AX
	VPBROADCASTD AX, Z29
	MOVL $-128, AX
	VPBROADCASTD AX, Z28

qk_block:
	// amax over the block, then the first index where |x| equals it.
	VPANDD (SI), Z31, Z3
	MOVQ   $64, AX

qk_max:
	VPANDD (SI)(AX*1), Z31, Z4
	VMAXPS Z4, Z3, Z3
	ADDQ   $64, AX
	CMPQ   AX, $1024
	JNE    qk_max
	VEXTRACTF64X4 $1, Z3, Y4
	VMAXPS        Y4, Y3, Y3
	VEXTRACTF128  $1, Y3, X4
	VMAXPS        X4, X3, X3
	VMOVHLPS      X3, X4, X4
	VMAXPS        X4, X3, X3
	VMOVSHDUP     X3, X4
	VMAXSS        X4, X3, X3
	VXORPS        X4, X4, X4
	VUCOMISS      X4, X3
	JEQ           qk_zero
	VBROADCASTSS  X3, Z3
	XORQ          AX, AX

qk_find:
	VPANDD  (SI)(AX*1), Z31, Z4
	VCMPPS  $0, Z3, Z4, K1
	KMOVW   K1, DX
	TESTL   DX, DX
	JNZ     qk_found
	ADDQ    $64, AX
	JMP     qk_find

qk_found:
	TZCNTL  DX, DX
	SHRQ    $2, AX
	ADDQ    DX, AX
	VMOVSS  (SI)(AX*4), X4 // vmax
	VDIVSS  X4, X30, X5    // iscale
	MOVL    $0x3f800000, AX
	VMOVD   AX, X6
	VDIVSS  X5, X6, X6     // d = 1/iscale
	VBROADCASTSS X5, Z5
	QK32(0, 64, 0, 16, 0)
	QK32(128, 192, 32, 48, 4)
	QK32(256, 320, 64, 80, 8)
	QK32(384, 448, 96, 112, 12)
	QK32(512, 576, 128, 144, 16)
	QK32(640, 704, 160, 176, 20)
	QK32(768, 832, 192, 208, 24)
	QK32(896, 960, 224, 240, 28)
	JMP qk_next

qk_zero:
	VPXORD    Z1, Z1, Z1
	VMOVDQU64 Z1, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z1, 128(DI)
	VMOVDQU64 Z1, 192(DI)
	VMOVDQU   Y1, (R8)
	VMOVDQU   Y1, (R9)

qk_next:
	ADDQ $1024, SI
	ADDQ $256, DI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  qk_block
	VZEROUPPER
	RET
