//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// gemmAVX512 is the GEMM micro-kernel (see gemm.go and gemmCall): four
// activation rows (int8 slots at R10–R13, blocks at R8, R9, AX, DX)
// against 32 weight rows, two vectors of 16 lanes. Z0–Z7 hold the int32
// sums of the current activation block (row r, vector v in Z(2r+v)),
// Z8–Z15 the weight block's float sums, Z16–Z23 the outputs, Z24/Z25 the
// codes of one slot group. X27 and X28 keep blocks and runs.

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

// RUN adds a run of 32 slots, eight slot groups.
#define RUN \
	GROUP(0, 0) \
	GROUP(4, 128) \
	GROUP(8, 256) \
	GROUP(12, 384) \
	GROUP(16, 512) \
	GROUP(20, 640) \
	GROUP(24, 768) \
	GROUP(28, 896) \
	ADDQ $1024, SI

// ACTBLOCK starts the sums of one activation block at its correction −Σq
// and adds its runs of 32 slots (R14 counts them), then converts the sums
// to float.
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
	RUN \
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
	MOVQ 40(DX), R10
	MOVQ 48(DX), R11
	MOVQ 56(DX), R12
	MOVQ 64(DX), R13
	MOVQ 72(DX), R8
	MOVQ 80(DX), R9
	MOVQ 88(DX), AX
	MOVQ 96(DX), DX
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
	DECQ CX
	JNZ gemm_wblock

	MOVQ c+0(FP), AX
	KMOVW 136(AX), K1
	KMOVW 138(AX), K2
	MOVQ 144(AX), BX
	MOVQ 104(AX), DX
	OUT(Z16, Z17)
	MOVQ 112(AX), DX
	OUT(Z18, Z19)
	MOVQ 120(AX), DX
	OUT(Z20, Z21)
	MOVQ 128(AX), DX
	OUT(Z22, Z23)
	VZEROUPPER
	RET

// The unpackers take 16 weight rows at a time: lane r of Z31 holds r·rb,
// so one gather reads the same four bytes of every row's block, and each
// transform of that vector is one slot group of the 16 rows in VPDPBUSD
// order (see gemmUnpacker).

// gemmlanes holds the dwords 0..15.
DATA gemmlanes<>+0(SB)/8, $0x0000000100000000
DATA gemmlanes<>+8(SB)/8, $0x0000000300000002
DATA gemmlanes<>+16(SB)/8, $0x0000000500000004
DATA gemmlanes<>+24(SB)/8, $0x0000000700000006
DATA gemmlanes<>+32(SB)/8, $0x0000000900000008
DATA gemmlanes<>+40(SB)/8, $0x0000000b0000000a
DATA gemmlanes<>+48(SB)/8, $0x0000000d0000000c
DATA gemmlanes<>+56(SB)/8, $0x0000000f0000000e
GLOBL gemmlanes<>(SB), RODATA|NOPTR, $64

// Bytes of 1 (byte masks 3 and 2 and the trit thresholds 85 and 170 are
// consts_amd64.h's mask3, twos, c85 and c170).

DATA gemmone<>+0(SB)/8, $0x0101010101010101
DATA gemmone<>+8(SB)/8, $0x0101010101010101
DATA gemmone<>+16(SB)/8, $0x0101010101010101
DATA gemmone<>+24(SB)/8, $0x0101010101010101
DATA gemmone<>+32(SB)/8, $0x0101010101010101
DATA gemmone<>+40(SB)/8, $0x0101010101010101
DATA gemmone<>+48(SB)/8, $0x0101010101010101
DATA gemmone<>+56(SB)/8, $0x0101010101010101
GLOBL gemmone<>(SB), RODATA|NOPTR, $64

// VPMULTISHIFTQB controls: gemmq2s<t> puts bits 8t+2u of a dword (code u
// of byte t) in byte u; gemmq1s<t> puts bit 4t+u in bit 1 of byte u.
DATA gemmq2s0<>+0(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+8(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+16(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+24(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+32(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+40(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+48(SB)/8, $0x2624222006040200
DATA gemmq2s0<>+56(SB)/8, $0x2624222006040200
GLOBL gemmq2s0<>(SB), RODATA|NOPTR, $64

DATA gemmq2s1<>+0(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+8(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+16(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+24(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+32(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+40(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+48(SB)/8, $0x2e2c2a280e0c0a08
DATA gemmq2s1<>+56(SB)/8, $0x2e2c2a280e0c0a08
GLOBL gemmq2s1<>(SB), RODATA|NOPTR, $64

DATA gemmq2s2<>+0(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+8(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+16(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+24(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+32(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+40(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+48(SB)/8, $0x3634323016141210
DATA gemmq2s2<>+56(SB)/8, $0x3634323016141210
GLOBL gemmq2s2<>(SB), RODATA|NOPTR, $64

DATA gemmq2s3<>+0(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+8(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+16(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+24(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+32(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+40(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+48(SB)/8, $0x3e3c3a381e1c1a18
DATA gemmq2s3<>+56(SB)/8, $0x3e3c3a381e1c1a18
GLOBL gemmq2s3<>(SB), RODATA|NOPTR, $64

DATA gemmq1s0<>+0(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+8(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+16(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+24(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+32(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+40(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+48(SB)/8, $0x2221201f0201003f
DATA gemmq1s0<>+56(SB)/8, $0x2221201f0201003f
GLOBL gemmq1s0<>(SB), RODATA|NOPTR, $64

DATA gemmq1s1<>+0(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+8(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+16(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+24(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+32(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+40(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+48(SB)/8, $0x2625242306050403
DATA gemmq1s1<>+56(SB)/8, $0x2625242306050403
GLOBL gemmq1s1<>(SB), RODATA|NOPTR, $64

DATA gemmq1s2<>+0(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+8(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+16(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+24(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+32(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+40(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+48(SB)/8, $0x2a2928270a090807
DATA gemmq1s2<>+56(SB)/8, $0x2a2928270a090807
GLOBL gemmq1s2<>(SB), RODATA|NOPTR, $64

DATA gemmq1s3<>+0(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+8(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+16(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+24(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+32(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+40(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+48(SB)/8, $0x2e2d2c2b0e0d0c0b
DATA gemmq1s3<>+56(SB)/8, $0x2e2d2c2b0e0d0c0b
GLOBL gemmq1s3<>(SB), RODATA|NOPTR, $64

DATA gemmq1s4<>+0(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+8(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+16(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+24(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+32(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+40(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+48(SB)/8, $0x3231302f1211100f
DATA gemmq1s4<>+56(SB)/8, $0x3231302f1211100f
GLOBL gemmq1s4<>(SB), RODATA|NOPTR, $64

DATA gemmq1s5<>+0(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+8(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+16(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+24(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+32(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+40(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+48(SB)/8, $0x3635343316151413
DATA gemmq1s5<>+56(SB)/8, $0x3635343316151413
GLOBL gemmq1s5<>(SB), RODATA|NOPTR, $64

DATA gemmq1s6<>+0(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+8(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+16(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+24(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+32(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+40(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+48(SB)/8, $0x3a3938371a191817
DATA gemmq1s6<>+56(SB)/8, $0x3a3938371a191817
GLOBL gemmq1s6<>(SB), RODATA|NOPTR, $64

DATA gemmq1s7<>+0(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+8(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+16(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+24(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+32(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+40(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+48(SB)/8, $0x3e3d3c3b1e1d1c1b
DATA gemmq1s7<>+56(SB)/8, $0x3e3d3c3b1e1d1c1b
GLOBL gemmq1s7<>(SB), RODATA|NOPTR, $64

// UNPACKINIT loads the arguments and the gather offsets.
#define UNPACKINIT \
	MOVQ dst+0(FP), DI \
	MOVQ ws+8(FP), DX \
	MOVQ src+16(FP), SI \
	MOVQ rb+24(FP), AX \
	MOVQ nb+32(FP), CX \
	VPBROADCASTD AX, Z31 \
	VPMULLD gemmlanes<>(SB), Z31, Z31

// GATHER loads the dword at addr of each of the 16 rows into z.
#define GATHER(addr, z) \
	KXNORW K1, K1, K1 \
	VPGATHERDD addr(Z31*1), K1, z

// SCALES stores the 16 rows' fp16 scales, bits shift.. of the dword at
// off, as float32 at DX.
#define SCALES(off, shift) \
	GATHER(off(SI), Z0) \
	VPSRLD $shift, Z0, Z0 \
	VPMOVDW Z0, Y0 \
	VCVTPH2PS Y0, Z0 \
	VMOVUPS Z0, (DX)

// NEXTBLOCK moves to the next block of bb bytes and groups slot groups.
#define NEXTBLOCK(bb, groups, loop) \
	ADDQ $bb, SI \
	ADDQ $(groups*128), DI \
	ADDQ $128, DX \
	DECQ CX \
	JNZ loop \
	VZEROUPPER \
	RET

// MSHIFT stores the bytes of Z0 selected by ctl and masked at off(R9).
#define MSHIFT(ctl, mask, off) \
	VPMULTISHIFTQB Z0, ctl, Z1 \
	VPANDD mask, Z1, Z1 \
	VMOVDQU32 Z1, off(R9)

// Q2BODY unpacks words dwords of Q2_0 codes per block: dword j (bytes
// 4j+2..) holds slot groups 4j..4j+3.
#define Q2BODY(words, loop, inner) \
	UNPACKINIT \
	VMOVDQU64 gemmq2s0<>(SB), Z20 \
	VMOVDQU64 gemmq2s1<>(SB), Z21 \
	VMOVDQU64 gemmq2s2<>(SB), Z22 \
	VMOVDQU64 gemmq2s3<>(SB), Z23 \
	VMOVDQU64 mask3<>(SB), Z24 \
loop: \
	SCALES(0, 0) \
	LEAQ 2(SI), R8 \
	MOVQ DI, R9 \
	MOVQ $words, BX \
inner: \
	GATHER((R8), Z0) \
	MSHIFT(Z20, Z24, 0) \
	MSHIFT(Z21, Z24, 128) \
	MSHIFT(Z22, Z24, 256) \
	MSHIFT(Z23, Z24, 384) \
	ADDQ $4, R8 \
	ADDQ $512, R9 \
	DECQ BX \
	JNZ inner \
	NEXTBLOCK(2+4*words, 4*words, loop)

// func unpackQ2AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
TEXT ·unpackQ2AVX512(SB), NOSPLIT, $0-40
	Q2BODY(8, unpackq2_block, unpackq2_word)

// func unpackQ2g64AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
TEXT ·unpackQ2g64AVX512(SB), NOSPLIT, $0-40
	Q2BODY(4, unpackq2g_block, unpackq2g_word)

// func unpackQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
//
// Dword j of the bits holds slot groups 8j..8j+7.
TEXT ·unpackQ1AVX512(SB), NOSPLIT, $0-40
	UNPACKINIT
	VMOVDQU64 gemmq1s0<>(SB), Z16
	VMOVDQU64 gemmq1s1<>(SB), Z17
	VMOVDQU64 gemmq1s2<>(SB), Z18
	VMOVDQU64 gemmq1s3<>(SB), Z19
	VMOVDQU64 gemmq1s4<>(SB), Z20
	VMOVDQU64 gemmq1s5<>(SB), Z21
	VMOVDQU64 gemmq1s6<>(SB), Z22
	VMOVDQU64 gemmq1s7<>(SB), Z23
	VMOVDQU64 twos<>(SB), Z25

unpackq1_block:
	SCALES(0, 0)
	LEAQ 2(SI), R8
	MOVQ DI, R9
	MOVQ $4, BX

unpackq1_word:
	GATHER((R8), Z0)
	MSHIFT(Z16, Z25, 0)
	MSHIFT(Z17, Z25, 128)
	MSHIFT(Z18, Z25, 256)
	MSHIFT(Z19, Z25, 384)
	MSHIFT(Z20, Z25, 512)
	MSHIFT(Z21, Z25, 640)
	MSHIFT(Z22, Z25, 768)
	MSHIFT(Z23, Z25, 896)
	ADDQ $4, R8
	ADDQ $1024, R9
	DECQ BX
	JNZ unpackq1_word
	NEXTBLOCK(18, 32, unpackq1_block)

// TQ2HALF unpacks bytes 32c..32c+31 (R8 on): the dword at 32c+m holds,
// at bits 2l, slot group 32c+8l+m/4 (R9 at group 32c+m/4).
#define TQ2HALF(inner) \
	MOVQ $8, BX \
inner: \
	GATHER((R8), Z0) \
	VPANDD Z24, Z0, Z1 \
	VMOVDQU32 Z1, (R9) \
	VPSRLD $2, Z0, Z1 \
	VPANDD Z24, Z1, Z1 \
	VMOVDQU32 Z1, 1024(R9) \
	VPSRLD $4, Z0, Z1 \
	VPANDD Z24, Z1, Z1 \
	VMOVDQU32 Z1, 2048(R9) \
	VPSRLD $6, Z0, Z1 \
	VPANDD Z24, Z1, Z1 \
	VMOVDQU32 Z1, 3072(R9) \
	ADDQ $4, R8 \
	ADDQ $128, R9 \
	DECQ BX \
	JNZ inner

// func unpackTQ2AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
TEXT ·unpackTQ2AVX512(SB), NOSPLIT, $0-40
	UNPACKINIT
	VMOVDQU64 mask3<>(SB), Z24

unpacktq2_block:
	SCALES(62, 16)
	MOVQ SI, R8
	MOVQ DI, R9
	TQ2HALF(unpacktq2_lo)
	ADDQ $(24*128), R9
	TQ2HALF(unpacktq2_hi)
	NEXTBLOCK(66, 64, unpacktq2_block)

// TRITZ puts trit level n of the bytes in z, with p = b·3ⁿ mod 256 in Z5
// (next: one more multiplication by 3) and the trit [p > 85] + [p > 170]
// (Z26–Z28: ones, 85, 170).
#define TRITZ(z) \
	VPSUBUSB Z27, Z5, z \
	VPMINUB Z26, z, z \
	VPSUBUSB Z28, Z5, Z7 \
	VPMINUB Z26, Z7, Z7 \
	VPADDB Z7, z, z \
	VPADDB Z5, Z5, Z7 \
	VPADDB Z7, Z5, Z5

// TRIT stores trit level n at off(R9).
#define TRIT(off) \
	TRITZ(Z6) \
	VMOVDQU32 Z6, off(R9)

// TRITS4 gathers the dword at addr and stores its trit levels 0..3,
// step bytes apart from R9 on.
#define TRITS4(addr, step) \
	GATHER(addr, Z5) \
	TRIT(0) \
	TRIT(step) \
	TRIT(2*step) \
	TRIT(3*step)

#define TRITINIT \
	UNPACKINIT \
	VMOVDQU64 gemmone<>(SB), Z26 \
	VMOVDQU64 c85<>(SB), Z27 \
	VMOVDQU64 c170<>(SB), Z28

// func unpackTQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
//
// The groups of unpackTQ1: qs[m..m+3] (m < 32) holds groups 8n+m/4,
// qs[32+m..] groups 40+4n+m/4, qh groups 60+n.
TEXT ·unpackTQ1AVX512(SB), NOSPLIT, $0-40
	TRITINIT

unpacktq1_block:
	SCALES(50, 16)
	MOVQ SI, R8
	MOVQ DI, R9
	MOVQ $8, BX

unpacktq1_a:
	TRITS4((R8), 1024)
	TRIT(4096)
	ADDQ $4, R8
	ADDQ $128, R9
	DECQ BX
	JNZ unpacktq1_a
	LEAQ (40*128)(DI), R9
	MOVQ $4, BX

unpacktq1_b:
	TRITS4((R8), 512)
	TRIT(2048)
	ADDQ $4, R8
	ADDQ $128, R9
	DECQ BX
	JNZ unpacktq1_b
	LEAQ (60*128)(DI), R9
	TRITS4((R8), 128)
	NEXTBLOCK(54, 64, unpacktq1_block)

// QHPAIR stores levels n and n+1 of the two qh bytes (words 0 of Z5's
// dwords) as one slot group at off(DI): level n+1 in the high words (K2).
#define QHPAIR(off) \
	TRITZ(Z6) \
	TRITZ(Z8) \
	VPSLLD $16, Z8, Z8 \
	VPBLENDMW Z8, Z6, K2, Z6 \
	VMOVDQU32 Z6, off(DI)

// func unpackPTQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
//
// The groups of unpackPTQ1: qs[m..m+3] (m < 16) holds groups 4n+m/4,
// qs[16+m..] groups 20+2n+m/4, qh groups 30 and 31.
TEXT ·unpackPTQ1AVX512(SB), NOSPLIT, $0-40
	TRITINIT
	MOVL $0xaaaaaaaa, AX
	KMOVD AX, K2

unpackptq1_block:
	SCALES(24, 16)
	MOVQ SI, R8
	MOVQ DI, R9
	MOVQ $4, BX

unpackptq1_a:
	TRITS4((R8), 512)
	TRIT(2048)
	ADDQ $4, R8
	ADDQ $128, R9
	DECQ BX
	JNZ unpackptq1_a
	LEAQ (20*128)(DI), R9
	TRITS4((R8), 256)
	TRIT(1024)
	ADDQ $128, R9
	TRITS4(4(R8), 256)
	TRIT(1024)
	GATHER(24(SI), Z5)
	QHPAIR(30*128)
	QHPAIR(31*128)
	NEXTBLOCK(28, 32, unpackptq1_block)
