//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// Constants of the Q4_0 and Q4_K kernels (the nibble mask m0f is in
// consts_amd64.h): Q4_0's offset 8 in every byte, and per Q4_K sub-block j
// the VPSHUFB control that spreads int16 scale j over every word of both
// 128-bit lanes.

DATA k4b8<>+0(SB)/8, $0x0808080808080808
DATA k4b8<>+8(SB)/8, $0x0808080808080808
DATA k4b8<>+16(SB)/8, $0x0808080808080808
DATA k4b8<>+24(SB)/8, $0x0808080808080808
GLOBL k4b8<>(SB), RODATA|NOPTR, $32

DATA k4shuf<>+0(SB)/8, $0x0100010001000100
DATA k4shuf<>+8(SB)/8, $0x0100010001000100
DATA k4shuf<>+16(SB)/8, $0x0100010001000100
DATA k4shuf<>+24(SB)/8, $0x0100010001000100
DATA k4shuf<>+32(SB)/8, $0x0302030203020302
DATA k4shuf<>+40(SB)/8, $0x0302030203020302
DATA k4shuf<>+48(SB)/8, $0x0302030203020302
DATA k4shuf<>+56(SB)/8, $0x0302030203020302
DATA k4shuf<>+64(SB)/8, $0x0504050405040504
DATA k4shuf<>+72(SB)/8, $0x0504050405040504
DATA k4shuf<>+80(SB)/8, $0x0504050405040504
DATA k4shuf<>+88(SB)/8, $0x0504050405040504
DATA k4shuf<>+96(SB)/8, $0x0706070607060706
DATA k4shuf<>+104(SB)/8, $0x0706070607060706
DATA k4shuf<>+112(SB)/8, $0x0706070607060706
DATA k4shuf<>+120(SB)/8, $0x0706070607060706
DATA k4shuf<>+128(SB)/8, $0x0908090809080908
DATA k4shuf<>+136(SB)/8, $0x0908090809080908
DATA k4shuf<>+144(SB)/8, $0x0908090809080908
DATA k4shuf<>+152(SB)/8, $0x0908090809080908
DATA k4shuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k4shuf<>(SB), RODATA|NOPTR, $256

// func q40AVX2(w *byte, nb int, q *int8, d *float32) float32
//
// Codes c−8 ∈ [−8, 7] become |c−8| and the activations take their sign, as
// in Q8_0's kernel, so VPMADDUBSW sees an unsigned and a signed operand.
TEXT ·q40AVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	VMOVDQU m0f<>(SB), Y15
	VMOVDQU k4b8<>(SB), Y14
	VMOVDQU ones16<>(SB), Y13
	VXORPS  Y0, Y0, Y0
	TESTQ   CX, CX
	JZ      q40_done
q40_block:
	// Low nibbles are elements 0..15, high nibbles 16..31.
	VMOVDQU 2(SI), X2
	VPSRLW  $4, X2, X3
	VINSERTI128 $1, X3, Y2, Y2
	VPAND   Y15, Y2, Y2
	VPSUBB  Y14, Y2, Y2
	VPABSB  Y2, Y3
	VMOVDQU (DI), Y4
	VPSIGNB Y2, Y4, Y4
	VPMADDUBSW Y4, Y3, Y5
	VPMADDWD   Y13, Y5, Y5
	VCVTDQ2PS Y5, Y5
	VPBROADCASTW (SI), X6
	VCVTPH2PS X6, Y6
	VBROADCASTSS (R9), Y7
	VMULPS Y7, Y6, Y6
	VFMADD231PS Y6, Y5, Y0
	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, R9
	DECQ CX
	JNZ  q40_block
q40_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// Constants of the AVX-512 Q4_0 kernel. k4perm is the VPERMB index that
// turns a pair of blocks into the 128-bit lanes (qs_A, qs_A, qs_B, qs_B),
// for a pair loaded from its start and, second half, for the second pair
// of a four-block step, loaded 8 bytes into the step; k4gf holds per
// qword the GF2P8AFFINEQB bit matrix that keeps a byte's low nibble
// (lanes 0 and 2) or moves its high nibble down (lanes 1 and 3), so one
// instruction yields the 64 codes in element order. k4scw is the VPERMI2W
// index that gathers the step's four fp16 scales (words 0 and 9 of the
// first load, 14 and 23 of the second) and k4spr the VPERMPS indices that
// spread scales 0 and 1, or 2 and 3, over eight lanes each.
DATA k4perm<>+0(SB)/8, $0x0908070605040302
DATA k4perm<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA k4perm<>+16(SB)/8, $0x0908070605040302
DATA k4perm<>+24(SB)/8, $0x11100f0e0d0c0b0a
DATA k4perm<>+32(SB)/8, $0x1b1a191817161514
DATA k4perm<>+40(SB)/8, $0x232221201f1e1d1c
DATA k4perm<>+48(SB)/8, $0x1b1a191817161514
DATA k4perm<>+56(SB)/8, $0x232221201f1e1d1c
DATA k4perm<>+64(SB)/8, $0x2524232221201f1e
DATA k4perm<>+72(SB)/8, $0x2d2c2b2a29282726
DATA k4perm<>+80(SB)/8, $0x2524232221201f1e
DATA k4perm<>+88(SB)/8, $0x2d2c2b2a29282726
DATA k4perm<>+96(SB)/8, $0x3736353433323130
DATA k4perm<>+104(SB)/8, $0x3f3e3d3c3b3a3938
DATA k4perm<>+112(SB)/8, $0x3736353433323130
DATA k4perm<>+120(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL k4perm<>(SB), RODATA|NOPTR, $128

DATA k4gf<>+0(SB)/8, $0x0102040800000000
DATA k4gf<>+8(SB)/8, $0x0102040800000000
DATA k4gf<>+16(SB)/8, $0x1020408000000000
DATA k4gf<>+24(SB)/8, $0x1020408000000000
DATA k4gf<>+32(SB)/8, $0x0102040800000000
DATA k4gf<>+40(SB)/8, $0x0102040800000000
DATA k4gf<>+48(SB)/8, $0x1020408000000000
DATA k4gf<>+56(SB)/8, $0x1020408000000000
GLOBL k4gf<>(SB), RODATA|NOPTR, $64

DATA k4scw<>+0(SB)/8, $0x0037002e00090000
DATA k4scw<>+8(SB)/8, $0x0000000000000000
DATA k4scw<>+16(SB)/8, $0x0000000000000000
DATA k4scw<>+24(SB)/8, $0x0000000000000000
DATA k4scw<>+32(SB)/8, $0x0000000000000000
DATA k4scw<>+40(SB)/8, $0x0000000000000000
DATA k4scw<>+48(SB)/8, $0x0000000000000000
DATA k4scw<>+56(SB)/8, $0x0000000000000000
GLOBL k4scw<>(SB), RODATA|NOPTR, $64

DATA k4spr<>+0(SB)/8, $0x0000000000000000
DATA k4spr<>+8(SB)/8, $0x0000000000000000
DATA k4spr<>+16(SB)/8, $0x0000000000000000
DATA k4spr<>+24(SB)/8, $0x0000000000000000
DATA k4spr<>+32(SB)/8, $0x0000000100000001
DATA k4spr<>+40(SB)/8, $0x0000000100000001
DATA k4spr<>+48(SB)/8, $0x0000000100000001
DATA k4spr<>+56(SB)/8, $0x0000000100000001
DATA k4spr<>+64(SB)/8, $0x0000000200000002
DATA k4spr<>+72(SB)/8, $0x0000000200000002
DATA k4spr<>+80(SB)/8, $0x0000000200000002
DATA k4spr<>+88(SB)/8, $0x0000000200000002
DATA k4spr<>+96(SB)/8, $0x0000000300000003
DATA k4spr<>+104(SB)/8, $0x0000000300000003
DATA k4spr<>+112(SB)/8, $0x0000000300000003
DATA k4spr<>+120(SB)/8, $0x0000000300000003
GLOBL k4spr<>(SB), RODATA|NOPTR, $128

// Q4_0 block pair in raw (at the byte offset perm accounts for) against
// the 64 activations at aoff(DI), added to acc with the scale lanes sc. Each int32 lane gets Σ c·q and 8·Σq over the same four
// elements, so after the subtraction it holds their exact Σ(c−8)·q.
#define Q40PAIR(raw, aoff, perm, sc, acc) \
	VPERMB         raw, perm, Z3 \
	VGF2P8AFFINEQB $0, Z30, Z3, Z3 \
	VPXORD         Z4, Z4, Z4 \
	VPDPBUSD       aoff(DI), Z3, Z4 \
	VPXORD         Z8, Z8, Z8 \
	VPDPBUSD       aoff(DI), Z25, Z8 \
	VPSUBD         Z8, Z4, Z4 \
	VCVTDQ2PS      Z4, Z4 \
	VFMADD231PS    sc, Z4, acc

// func q40AVX512(w *byte, nb int, q *int8, d *float32) float32
//
// q and d are one activation row's values and block scales. Four blocks
// per step into two accumulators, loaded as bytes 0–63 and 8–71 so that
// no load passes the step's 72 bytes; their four fp16 scales are
// gathered, converted and multiplied by d at once, then spread over eight
// lanes each. A last pair and a lone block follow, with loads masked to
// their bytes. The weights are prefetched 2 KiB ahead: from memory the
// loop otherwise waited on them (2048×151936: 12.9 against 15.0 GB/s on
// one thread, 22.8 against 27.8 on two, best of four on a busy machine).
//
// Every lane is exact before it is scaled, so rounding grows with
// Σ|(c−8)·q·d| only. Lanes that start from the block's −8·Σq instead (the
// sz lanes, one VPDPBUSD less) measured about 15 % faster, but their terms
// cancel: with most codes 8 the error exceeded the tests' bound.
TEXT ·q40AVX512(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	MOVQ $0xfffffffff, AX
	KMOVQ AX, K1
	MOVL $0x3ffff, AX
	KMOVD AX, K2
	VMOVDQU64 k4perm<>(SB), Z31
	VMOVDQU64 k4perm<>+64(SB), Z29
	VMOVDQU64 k4gf<>(SB), Z30
	VPBROADCASTB k4b8<>(SB), Z25
	VMOVDQU64 k4scw<>(SB), Z28
	VMOVDQU64 k4spr<>(SB), Z27
	VMOVDQU64 k4spr<>+64(SB), Z26
	VPXORD    Z0, Z0, Z0
	VPXORD    Z1, Z1, Z1
	SUBQ      $4, CX
	JCS       q40v_tail
q40v_quad:
	PREFETCHT0  2048(SI)
	VMOVDQU64   (SI), Z2
	VMOVDQU64   8(SI), Z7
	VMOVDQA64   Z28, Z6
	VPERMI2W    Z7, Z2, Z6
	VCVTPH2PS   X6, X6
	VMULPS      (R9), X6, X6
	VPERMPS     Z6, Z27, Z5
	Q40PAIR(Z2, 0, Z31, Z5, Z0)
	VPERMPS     Z6, Z26, Z5
	Q40PAIR(Z7, 64, Z29, Z5, Z1)
	ADDQ $72, SI
	ADDQ $128, DI
	ADDQ $16, R9
	SUBQ $4, CX
	JCC  q40v_quad
q40v_tail:
	ADDQ $4, CX
	CMPQ CX, $2
	JLT  q40v_one
	// A pair: two scales and two d values (lanes 2 and 3 go unused).
	VMOVDQU8.Z (SI), K1, Z2
	VPERMW     Z2, Z28, Z6
	VCVTPH2PS  X6, X6
	VMOVQ      (R9), X5
	VMULPS     X5, X6, X6
	VPERMPS    Z6, Z27, Z5
	Q40PAIR(Z2, 0, Z31, Z5, Z0)
	ADDQ $36, SI
	ADDQ $64, DI
	ADDQ $8, R9
	SUBQ $2, CX
q40v_one:
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	TESTQ         CX, CX
	JZ            q40v_done
	VMOVDQU8.Z     (SI), K2, Y2
	VPERMB         Y2, Y31, Y3
	VGF2P8AFFINEQB $0, Y30, Y3, Y3
	VPXORD         Y4, Y4, Y4
	VPDPBUSD       (DI), Y3, Y4
	VPXORD         Y8, Y8, Y8
	VPDPBUSD       (DI), Y25, Y8
	VPSUBD         Y8, Y4, Y4
	VCVTDQ2PS      Y4, Y4
	VPBROADCASTW   X2, X6
	VCVTPH2PS      X6, Y6
	VMULPS.BCST    (R9), Y6, Y6
	VFMADD231PS    Y6, Y4, Y0
q40v_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// Q4_K sub-blocks 2c (low nibbles of qs[32c:32c+32]) and 2c+1 (high
// nibbles): Σ sc·c·q in int32 lanes added to Y1. Y7 holds the eight int16
// scales in both lanes; the VPMADDUBSW pair sums (≤ 2·15·127) times a 6-bit
// scale fit VPMADDWD's int32 lanes.
#define Q4KSUB(c) \
	VMOVDQU (16+32*c)(SI), Y2 \
	VPAND   Y15, Y2, Y3 \
	VPSRLW  $4, Y2, Y2 \
	VPAND   Y15, Y2, Y2 \
	VPMADDUBSW (64*c)(DI), Y3, Y3 \
	VPMADDUBSW (64*c+32)(DI), Y2, Y2 \
	VMOVDQU k4shuf<>+(64*c)(SB), Y6 \
	VPSHUFB Y6, Y7, Y6 \
	VPMADDWD Y6, Y3, Y3 \
	VMOVDQU k4shuf<>+(64*c+32)(SB), Y6 \
	VPSHUFB Y6, Y7, Y6 \
	VPMADDWD Y6, Y2, Y2 \
	VPADDD Y3, Y1, Y1 \
	VPADDD Y2, Y1, Y1

// Q4_K block scales (formats.md §6b) from the 12 bytes at 4(SI), read as
// three words u0, u1, u2: sc0..3 = u0&63, m0..3 = u1&63, sc4..7 =
// u2&15 | u0>>6<<4 and m4..7 = u2>>4 | u1>>6<<4, bytewise; R10 receives
// the eight sc bytes and R11 the eight m bytes (AX, BX, DX, R12 and R13
// are clobbered).
#define Q4KSCALES \
	MOVL 4(SI), AX \
	MOVL 8(SI), BX \
	MOVL 12(SI), DX \
	MOVL AX, R10 \
	ANDL $0x3f3f3f3f, R10 \
	MOVL AX, R11 \
	SHRL $6, R11 \
	ANDL $0x03030303, R11 \
	SHLL $4, R11 \
	MOVL DX, R12 \
	ANDL $0x0f0f0f0f, R12 \
	ORL  R12, R11 \
	SHLQ $32, R11 \
	ORQ  R11, R10 \
	MOVL BX, R11 \
	ANDL $0x3f3f3f3f, R11 \
	MOVL BX, R12 \
	SHRL $6, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	MOVL DX, R13 \
	SHRL $4, R13 \
	ANDL $0x0f0f0f0f, R13 \
	ORL  R13, R12 \
	SHLQ $32, R12 \
	ORQ  R12, R11

// func q4kAVX2(w *byte, nb int, q *int8, d *float32, s *int32) float32
//
// d and s hold one scale and one sum Σq per 32 activations (Q8_K's scale
// replicated); the kernel reads the first scale of each 256-block. A block
// adds d_a·(d·Σ sc_j·Σc·q − dmin·Σ m_j·s_j) over its sub-blocks j.
TEXT ·q4kAVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	MOVQ s+32(FP), R8
	VMOVDQU m0f<>(SB), Y15
	VXORPS  Y0, Y0, Y0
	TESTQ   CX, CX
	JZ      q4k_done
q4k_block:
	Q4KSCALES
	VMOVQ R10, X7
	VPMOVZXBW X7, X7
	VPERMQ $0x44, Y7, Y7
	// Σ m_j·s_j per lane: ≤ 63·32·127, exact in int32 and float32.
	VMOVQ R11, X8
	VPMOVZXBD X8, Y8
	VPMULLD (R8), Y8, Y8
	VCVTDQ2PS Y8, Y8
	VPXOR Y1, Y1, Y1
	Q4KSUB(0)
	Q4KSUB(1)
	Q4KSUB(2)
	Q4KSUB(3)
	VCVTDQ2PS Y1, Y1
	VBROADCASTSS (R9), Y10
	VPBROADCASTW (SI), X6
	VCVTPH2PS X6, Y6
	VMULPS Y10, Y6, Y6
	VPBROADCASTW 2(SI), X9
	VCVTPH2PS X9, Y9
	VMULPS Y10, Y9, Y9
	VFMADD231PS  Y6, Y1, Y0
	VFNMADD231PS Y9, Y8, Y0
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $32, R9
	ADDQ $32, R8
	DECQ CX
	JNZ  q4k_block
q4k_done:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// The AVX-512 Q4_K kernel's GF2P8AFFINEQB matrix that moves every byte's
// high nibble down.
DATA k4gfh<>+0(SB)/8, $0x1020408000000000
DATA k4gfh<>+8(SB)/8, $0x1020408000000000
DATA k4gfh<>+16(SB)/8, $0x1020408000000000
DATA k4gfh<>+24(SB)/8, $0x1020408000000000
GLOBL k4gfh<>(SB), RODATA|NOPTR, $32

// Q4_K chunk c: sub-blocks 2c (low nibbles of qs[32c:32c+32], masked) and
// 2c+1 (high nibbles, moved down by GF2P8AFFINEQB with the matrix in
// Y14) times their activations, in word pairs by VPMADDUBSW (≤ 2·15·127,
// no saturation), times the sub-block scales from the stack table,
// broadcast as word pairs, into the int32 lanes of Y1 and Y4 by VPDPWSSD.
#define Q4KCHUNK(c) \
	VMOVDQU64      (16+32*c)(SI), Y2 \
	VPANDD         Y15, Y2, Y3 \
	VGF2P8AFFINEQB $0, Y14, Y2, Y2 \
	VPMADDUBSW     (64*c)(DI), Y3, Y3 \
	VPMADDUBSW     (64*c+32)(DI), Y2, Y2 \
	VPDPWSSD.BCST  (8*c)(SP), Y3, Y1 \
	VPDPWSSD.BCST  (8*c+4)(SP), Y2, Y4

// func q4kAVX512(w *byte, nb int, q *int8, d *float32, s *int32) float32
//
// q4kAVX2 with VNNI in 256-bit registers: the eight scales go to a stack
// table of dwords (sc, sc) as word pairs, which VPDPWSSD reads by
// broadcast, so no shuffle spreads them; Σ m_j·s_j is one VPMADDWD (the
// low word of each s_j is s_j, |s_j| ≤ 32·127). A block's Σ sc_j·Σc·q (≤
// 63·32·15·127 in all) is exact in int32 and float32. Wider registers
// measured no faster: Zen 4 splits them, and spreading the scales costs
// a shuffle per 64 codes.
TEXT ·q4kAVX512(SB), NOSPLIT, $32-44
	MOVQ w+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ q+16(FP), DI
	MOVQ d+24(FP), R9
	MOVQ s+32(FP), R8
	VMOVDQU64 m0f<>(SB), Y15
	VMOVDQU64 k4gfh<>(SB), Y14
	VPXORD Y0, Y0, Y0
	VPXORD Y11, Y11, Y11
	TESTQ  CX, CX
	JZ     q4kv_done
q4kv_block:
	Q4KSCALES
	VMOVQ     R10, X7
	VPMOVZXBD X7, Y7
	VPSLLD    $16, Y7, Y8
	VPORD     Y8, Y7, Y7
	VMOVDQU   Y7, (SP)
	VMOVQ     R11, X8
	VPMOVZXBD X8, Y8
	VPMADDWD  (R8), Y8, Y8
	VPXORD    Y1, Y1, Y1
	VPXORD    Y4, Y4, Y4
	Q4KCHUNK(0)
	Q4KCHUNK(1)
	Q4KCHUNK(2)
	Q4KCHUNK(3)
	VPADDD       Y4, Y1, Y1
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y8, Y8
	// d·d_a and dmin·d_a in lanes 0 and 1 (lanes 2 and 3 are unused).
	VCVTPH2PS    (SI), X6
	VMULPS.BCST  (R9), X6, X6
	VBROADCASTSS X6, Y9
	VFMADD231PS  Y9, Y1, Y0
	VMOVSHDUP    X6, X6
	VBROADCASTSS X6, Y9
	VFNMADD231PS Y9, Y8, Y11
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $32, R9
	ADDQ $32, R8
	DECQ CX
	JNZ  q4kv_block
q4kv_done:
	VADDPS Y11, Y0, Y0
	HSUM
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// Float matvec: Σ w·x over n elements (n a multiple of 8) in four chains
// of eight lanes, 32 elements per step, then eight at a time. LOAD(off, r)
// converts eight weights at off(SI) to float32 in r; step is the bytes of
// eight weights.
#define FDOT(name, LOAD, step) \
TEXT name(SB), NOSPLIT, $0-28 \
	MOVQ w+0(FP), SI \
	MOVQ x+8(FP), DI \
	MOVQ n+16(FP), CX \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	CMPQ CX, $32 \
	JLT  tail8 \
loop32: \
	LOAD(0, Y4) \
	LOAD(step, Y5) \
	LOAD(2*step, Y6) \
	LOAD(3*step, Y7) \
	VFMADD231PS (DI), Y4, Y0 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VFMADD231PS 96(DI), Y7, Y3 \
	ADDQ $(4*step), SI \
	ADDQ $128, DI \
	SUBQ $32, CX \
	CMPQ CX, $32 \
	JGE  loop32 \
tail8: \
	TESTQ CX, CX \
	JZ    done \
loop8: \
	LOAD(0, Y4) \
	VFMADD231PS (DI), Y4, Y0 \
	ADDQ $step, SI \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JNZ  loop8 \
done: \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	HSUM \
	VZEROUPPER \
	MOVSS X0, ret+24(FP) \
	RET

#define LOADF16(off, r) VCVTPH2PS off(SI), r
#define LOADBF16(off, r) \
	VPMOVZXWD off(SI), r \
	VPSLLD    $16, r, r

// func f32AVX2(w *byte, x *float32, n int, s *[4]float32)
//
// F32 keeps the generic kernel's exact order (chain k sums the products of
// the elements ≡ k mod 4, multiply and add rounded separately) so that
// every tier gives bit-identical results: tests of the model compare
// batched and sequential forward passes, whose float32 weights are small
// matrices where the order matters more than the speed. n is a multiple of
// 4; s receives the four chains.
TEXT ·f32AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ s+24(FP), DX
	VXORPS X0, X0, X0
	CMPQ CX, $16
	JLT  f32_tail4
f32_loop16:
	VMOVUPS (SI), X4
	VMOVUPS 16(SI), X5
	VMOVUPS 32(SI), X6
	VMOVUPS 48(SI), X7
	VMULPS (DI), X4, X4
	VMULPS 16(DI), X5, X5
	VMULPS 32(DI), X6, X6
	VMULPS 48(DI), X7, X7
	VADDPS X4, X0, X0
	VADDPS X5, X0, X0
	VADDPS X6, X0, X0
	VADDPS X7, X0, X0
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  f32_loop16
f32_tail4:
	TESTQ CX, CX
	JZ    f32_done
f32_loop4:
	VMOVUPS (SI), X4
	VMULPS  (DI), X4, X4
	VADDPS  X4, X0, X0
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ  f32_loop4
f32_done:
	VMOVUPS X0, (DX)
	RET

// func f16AVX2(w *byte, x *float32, n int) float32
FDOT(·f16AVX2, LOADF16, 16)

// func bf16AVX2(w *byte, x *float32, n int) float32
FDOT(·bf16AVX2, LOADBF16, 16)
