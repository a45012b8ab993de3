//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// The plane kernels (AVX-512 matvec): the activations are stored per
// 256-element chunk as four 64-byte planes ordered so that plane t lines up
// with the weight bytes shifted right by 2t and masked to 2 bits. Each
// chunk's int32 lanes then sum 16 weights over the four planes before one
// conversion and one multiply-add, and one int32 lane never mixes two
// activation blocks (see preparePlanes).

// PLANES4(stride) adds the four planes' products of the weight bytes in Z5
// into Z1 (started from the correction lanes); planes lie stride bytes apart.
#define PLANES4(stride) \
	VPANDQ   Z14, Z5, Z2 \
	VPDPBUSD (DI), Z2, Z1 \
	VPSRLW   $2, Z5, Z2 \
	VPANDQ   Z14, Z2, Z2 \
	VPDPBUSD stride(DI), Z2, Z3 \
	VPSRLW   $4, Z5, Z2 \
	VPANDQ   Z14, Z2, Z2 \
	VPDPBUSD 2*stride(DI), Z2, Z1 \
	VPSRLW   $6, Z5, Z2 \
	VPANDQ   Z14, Z2, Z2 \
	VPDPBUSD 3*stride(DI), Z2, Z3 \
	VPADDD   Z3, Z1, Z1

// func q2pAVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
//
// Q2_0 (group 128): two weight blocks per chunk, lanes 0–7 from the first.
TEXT ·q2pAVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 mask3<>(SB), Z14
	VPXORD    Z0, Z0, Z0
	SUBQ      $2, CX
	JCS       q2p_tail

q2p_pair:
	VMOVDQU      2(SI), Y5
	VINSERTI64X4 $1, 36(SI), Z5, Z5
	VMOVDQU32    (R8), Z1
	VPXORD       Z3, Z3, Z3
	PLANES4(64)
	VCVTDQ2PS    Z1, Z1
	VMULPS       (R9), Z1, Z1
	VPBROADCASTW (SI), X6
	VPBROADCASTW 34(SI), X7
	VINSERTI128  $1, X7, Y6, Y6
	VCVTPH2PS    Y6, Z6
	VFMADD231PS  Z6, Z1, Z0
	ADDQ         $68, SI
	ADDQ         $256, DI
	ADDQ         $64, R8
	ADDQ         $64, R9
	SUBQ         $2, CX
	JCC          q2p_pair

q2p_tail:
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	ADDQ          $2, CX
	JZ            q2p_done

	// One block left: a 128-element chunk of four 32-byte planes.
	VMOVDQU      2(SI), Y5
	VMOVDQU      (R8), Y1
	VPXORD       Y3, Y3, Y3
	VPANDD       Y14, Y5, Y2
	VPDPBUSD     (DI), Y2, Y1
	VPSRLW       $2, Y5, Y2
	VPANDD       Y14, Y2, Y2
	VPDPBUSD     32(DI), Y2, Y3
	VPSRLW       $4, Y5, Y2
	VPANDD       Y14, Y2, Y2
	VPDPBUSD     64(DI), Y2, Y1
	VPSRLW       $6, Y5, Y2
	VPANDD       Y14, Y2, Y2
	VPDPBUSD     96(DI), Y2, Y3
	VPADDD       Y3, Y1, Y1
	VCVTDQ2PS    Y1, Y1
	VMULPS       (R9), Y1, Y1
	VPBROADCASTW (SI), X6
	VCVTPH2PS    X6, Y6
	VFMADD231PS  Y6, Y1, Y0

q2p_done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X1, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+40(FP)
	RET

// func tq2pAVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
//
// TQ2_0: byte 32h+m of a block holds element 128h+32l+m at bits 2l, so
// plane l is activation elements 32l.. and 128+32l.., 32 each.
TEXT ·tq2pAVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 mask3<>(SB), Z14
	VPXORD    Z0, Z0, Z0

tq2p_block:
	VMOVDQU64    (SI), Z5
	VMOVDQU32    (R8), Z1
	VPXORD       Z3, Z3, Z3
	PLANES4(64)
	VCVTDQ2PS    Z1, Z1
	VMULPS       (R9), Z1, Z1
	VPBROADCASTW 64(SI), Y6
	VCVTPH2PS    Y6, Z6
	VFMADD231PS  Z6, Z1, Z0
	ADDQ         $66, SI
	ADDQ         $256, DI
	ADDQ         $64, R8
	ADDQ         $64, R9
	DECQ         CX
	JNZ          tq2p_block

	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X1, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+40(FP)
	RET
