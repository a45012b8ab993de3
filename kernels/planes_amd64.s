//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// The plane kernels (AVX-512 matvec) read the plane layouts of planes.go:
// plane t of a chunk lines up with the weight code bytes shifted right by t
// code widths and masked, so each int32 lane sums a chunk's weights over
// all planes before one conversion and one multiply-add.

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

// A byte mask of 0x30 (the Q2_0 plane kernel). Gathering the code bytes
// and scales of its two blocks with VPERMT2B and VPERMW from two loads
// measured 7 % slower than the loads, broadcasts and inserts used here.
DATA mask30<>+0(SB)/8, $0x3030303030303030
DATA mask30<>+8(SB)/8, $0x3030303030303030
DATA mask30<>+16(SB)/8, $0x3030303030303030
DATA mask30<>+24(SB)/8, $0x3030303030303030
DATA mask30<>+32(SB)/8, $0x3030303030303030
DATA mask30<>+40(SB)/8, $0x3030303030303030
DATA mask30<>+48(SB)/8, $0x3030303030303030
DATA mask30<>+56(SB)/8, $0x3030303030303030
GLOBL mask30<>(SB), RODATA|NOPTR, $64

// func q2pAVX512(w *byte, nb int, q *int8, sz *int32, ds *float32) float32
//
// Q2_0 (group 128): two weight blocks per chunk, lanes 0–7 from the first.
// Codes 0 and 1 of each byte are masked in place (b & 3, b>>2 & 3); codes
// 2 and 3 are masked at 16 times their value (b & 0x30, b>>2 & 0x30) into
// a second accumulator that is shifted back, exactly, once per chunk.
TEXT ·q2pAVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 mask3<>(SB), Z14
	VMOVDQU64 mask30<>(SB), Z15
	VPXORD    Z0, Z0, Z0
	SUBQ      $2, CX
	JCS       q2p_tail

q2p_pair:
	VMOVDQU      2(SI), Y5
	VINSERTI64X4 $1, 36(SI), Z5, Z5
	VPBROADCASTW (SI), X7
	VPBROADCASTW 34(SI), X8
	VINSERTI128  $1, X8, Y7, Y7
	VCVTPH2PS    Y7, Z7
	VMOVDQU32   (R8), Z1
	VPXORD      Z3, Z3, Z3
	VPSRLW      $2, Z5, Z6
	VPANDQ      Z14, Z5, Z2
	VPDPBUSD    (DI), Z2, Z1
	VPANDQ      Z15, Z5, Z4
	VPDPBUSD    128(DI), Z4, Z3
	VPANDQ      Z14, Z6, Z2
	VPDPBUSD    64(DI), Z2, Z1
	VPANDQ      Z15, Z6, Z4
	VPDPBUSD    192(DI), Z4, Z3
	VPSRAD      $4, Z3, Z3
	VPADDD      Z3, Z1, Z1
	VCVTDQ2PS   Z1, Z1
	VMULPS      (R9), Z1, Z1
	VFMADD231PS Z7, Z1, Z0
	ADDQ        $68, SI
	ADDQ        $256, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	SUBQ        $2, CX
	JCC         q2p_pair

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

// The Q1_0 plane kernel's constants: the VPERMT2B index that gathers the
// code bytes of four 18-byte blocks from the loads at 0 and 8 (block 3
// from the second), and the VPERMW index that spreads the four fp16
// scales (words 0, 9, 18, 27) over four lanes each.
DATA q1pidx<>+0(SB)/8, $0x0908070605040302
DATA q1pidx<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q1pidx<>+16(SB)/8, $0x1b1a191817161514
DATA q1pidx<>+24(SB)/8, $0x232221201f1e1d1c
DATA q1pidx<>+32(SB)/8, $0x2d2c2b2a29282726
DATA q1pidx<>+40(SB)/8, $0x3534333231302f2e
DATA q1pidx<>+48(SB)/8, $0x7776757473727170
DATA q1pidx<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL q1pidx<>(SB), RODATA|NOPTR, $64

DATA q1pscl<>+0(SB)/8, $0x0000000000000000
DATA q1pscl<>+8(SB)/8, $0x0009000900090009
DATA q1pscl<>+16(SB)/8, $0x0012001200120012
DATA q1pscl<>+24(SB)/8, $0x001b001b001b001b
DATA q1pscl<>+32(SB)/8, $0x0000000000000000
DATA q1pscl<>+40(SB)/8, $0x0000000000000000
DATA q1pscl<>+48(SB)/8, $0x0000000000000000
DATA q1pscl<>+56(SB)/8, $0x0000000000000000
GLOBL q1pscl<>(SB), RODATA|NOPTR, $64

// Q1PLANE(shift, off) adds plane off/64 (bit shift+1 of each code byte,
// as 0 or 2) into Z1 or Z3.
#define Q1PLANE(shift, off, acc) \
	VPSRLW   $shift, Z5, Z2 \
	VPANDQ   Z11, Z2, Z2 \
	VPDPBUSD off(DI), Z2, acc

// func q1pAVX512(w *byte, nc int, q *int8, sz *int32, ds *float32) float32
//
// Q1_0: four blocks (512 elements) per chunk; lane ℓ is 32-block ℓ, and
// codes 2·bit make Σ(2·bit−1)·q = Σ 2·bit·q − s.
TEXT ·q1pAVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nc+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 q1pidx<>(SB), Z13
	VMOVDQU64 q1pscl<>(SB), Z12
	VMOVDQU64 twos<>(SB), Z11
	VPXORD    Z0, Z0, Z0

q1p_chunk:
	VMOVDQU64   (SI), Z5
	VPERMW      Z5, Z12, Z7
	VPERMT2B    8(SI), Z13, Z5
	VCVTPH2PS   Y7, Z7
	VMOVDQU32   (R8), Z1
	VPXORD      Z3, Z3, Z3
	VPADDB      Z5, Z5, Z2
	VPANDQ      Z11, Z2, Z2
	VPDPBUSD    (DI), Z2, Z1
	VPANDQ      Z11, Z5, Z2
	VPDPBUSD    64(DI), Z2, Z3
	Q1PLANE(1, 128, Z1)
	Q1PLANE(2, 192, Z3)
	Q1PLANE(3, 256, Z1)
	Q1PLANE(4, 320, Z3)
	Q1PLANE(5, 384, Z1)
	Q1PLANE(6, 448, Z3)
	VPADDD      Z3, Z1, Z1
	VCVTDQ2PS   Z1, Z1
	VMULPS      (R9), Z1, Z1
	VFMADD231PS Z7, Z1, Z0
	ADDQ        $72, SI
	ADDQ        $512, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	DECQ        CX
	JNZ         q1p_chunk

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

// Q2_0_g64 reads the planeQ2 layout too (a 64-element block is four of its
// lanes); its four 18-byte blocks per chunk are gathered like Q1_0's.

// G64LOAD gathers a chunk's code bytes into Z5 and its scales, four lanes
// each, into Z7 (Z12, Z13: q1pscl, q1pidx).
#define G64LOAD \
	VMOVDQU64 (SI), Z5 \
	VPERMW    Z5, Z12, Z7 \
	VPERMT2B  8(SI), Z13, Z5 \
	VCVTPH2PS Y7, Z7

// func q2gpAVX512(w *byte, nc int, q *int8, sz *int32, ds *float32) float32
TEXT ·q2gpAVX512(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nc+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ sz+24(FP), R8
	MOVQ ds+32(FP), R9
	VMOVDQU64 mask3<>(SB), Z14
	VMOVDQU64 mask30<>(SB), Z15
	VMOVDQU64 q1pidx<>(SB), Z13
	VMOVDQU64 q1pscl<>(SB), Z12
	VPXORD    Z0, Z0, Z0

q2gp_chunk:
	G64LOAD
	VMOVDQU32   (R8), Z1
	VPXORD      Z3, Z3, Z3
	VPSRLW      $2, Z5, Z6
	VPANDQ      Z14, Z5, Z2
	VPDPBUSD    (DI), Z2, Z1
	VPANDQ      Z15, Z5, Z4
	VPDPBUSD    128(DI), Z4, Z3
	VPANDQ      Z14, Z6, Z2
	VPDPBUSD    64(DI), Z2, Z1
	VPANDQ      Z15, Z6, Z4
	VPDPBUSD    192(DI), Z4, Z3
	VPSRAD      $4, Z3, Z3
	VPADDD      Z3, Z1, Z1
	VCVTDQ2PS   Z1, Z1
	VMULPS      (R9), Z1, Z1
	VFMADD231PS Z7, Z1, Z0
	ADDQ        $72, SI
	ADDQ        $256, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	DECQ        CX
	JNZ         q2gp_chunk

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
