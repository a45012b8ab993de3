//go:build !purego

#include "textflag.h"

// ZERO8 and ZERO16 clear the accumulators Z0–Z7 and Z0–Z15; STORE8
// writes Z0–Z7 to 512 bytes at DI.
#define ZERO8 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

#define ZERO16 \
	ZERO8 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15

#define STORE8 \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, 64(DI) \
	VMOVUPS Z2, 128(DI) \
	VMOVUPS Z3, 192(DI) \
	VMOVUPS Z4, 256(DI) \
	VMOVUPS Z5, 320(DI) \
	VMOVUPS Z6, 384(DI) \
	VMOVUPS Z7, 448(DI)

// F16FMA8 converts the 128 fp16 values at off(SI) (eight vectors, into
// Z17–Z24) and adds each, times Z16, into the accumulators a0–a7.
#define F16FMA8(off, a0, a1, a2, a3, a4, a5, a6, a7) \
	VCVTPH2PS   (off)(SI), Z17 \
	VCVTPH2PS   (off+32)(SI), Z18 \
	VCVTPH2PS   (off+64)(SI), Z19 \
	VCVTPH2PS   (off+96)(SI), Z20 \
	VCVTPH2PS   (off+128)(SI), Z21 \
	VCVTPH2PS   (off+160)(SI), Z22 \
	VCVTPH2PS   (off+192)(SI), Z23 \
	VCVTPH2PS   (off+224)(SI), Z24 \
	VFMADD231PS Z17, Z16, a0 \
	VFMADD231PS Z18, Z16, a1 \
	VFMADD231PS Z19, Z16, a2 \
	VFMADD231PS Z20, Z16, a3 \
	VFMADD231PS Z21, Z16, a4 \
	VFMADD231PS Z22, Z16, a5 \
	VFMADD231PS Z23, Z16, a6 \
	VFMADD231PS Z24, Z16, a7

// The attention kernels of the AVX-512 tier. Rows are head rows of hd
// elements, hd a multiple of 64; the Go wrappers (kernels_amd64.go) check
// the lengths. Every score and every accumulated value is computed in one
// fixed order, so it never depends on how many keys or query rows a call
// has.

// The transposed dot products take 128 keys per pass: per dimension i,
// Z0–Z7 += q[i] × the keys' element i. Each key's sum takes the dimensions
// in order, one fused multiply-add each.

// func dotsTF32AVX512(dst []float32, q []float32, kt []byte)
// kt holds len(q) rows of 256 (a page) float32 keys' elements; dst gets
// the scores of its first len(dst) keys, len(dst) a multiple of 128.
TEXT ·dotsTF32AVX512(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ q_base+24(FP), R8
	MOVQ q_len+32(FP), R9
	MOVQ kt_base+48(FP), R10
	SHRQ $7, CX             // groups of 128 keys

tf32grp:
	ZERO8
	MOVQ   R10, SI
	MOVQ   R8, DX
	MOVQ   R9, BX

tf32dim:
	VBROADCASTSS (DX), Z8
	VFMADD231PS  (SI), Z8, Z0
	VFMADD231PS  64(SI), Z8, Z1
	VFMADD231PS  128(SI), Z8, Z2
	VFMADD231PS  192(SI), Z8, Z3
	VFMADD231PS  256(SI), Z8, Z4
	VFMADD231PS  320(SI), Z8, Z5
	VFMADD231PS  384(SI), Z8, Z6
	VFMADD231PS  448(SI), Z8, Z7
	ADDQ         $1024, SI  // the next dimension: 256 keys × 4 bytes
	ADDQ         $4, DX
	DECQ         BX
	JNZ          tf32dim
	STORE8
	ADDQ         $512, DI
	ADDQ         $512, R10
	DECQ         CX
	JNZ          tf32grp
	VZEROUPPER
	RET

// func accF16AVX512(acc []float32, p []float32, v []byte)
// acc = Σ_j p[j]·v_j, v rows of len(acc) fp16 values, j in order. The
// columns go in groups of 64 (four accumulators), each group a pass over
// the rows.
TEXT ·accF16AVX512(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), R9
	MOVQ p_base+24(FP), R8
	MOVQ p_len+32(FP), R10
	MOVQ v_base+48(FP), R11
	MOVQ R9, R12
	SHLQ $1, R12            // row bytes
	SHRQ $6, R9             // column groups

af16grp:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   R11, SI
	MOVQ   R8, DX
	MOVQ   R10, CX
	TESTQ  CX, CX
	JZ     af16store

af16row:
	VBROADCASTSS (DX), Z8
	VCVTPH2PS    (SI), Z4
	VCVTPH2PS    32(SI), Z5
	VCVTPH2PS    64(SI), Z6
	VCVTPH2PS    96(SI), Z7
	VFMADD231PS  Z4, Z8, Z0
	VFMADD231PS  Z5, Z8, Z1
	VFMADD231PS  Z6, Z8, Z2
	VFMADD231PS  Z7, Z8, Z3
	ADDQ         R12, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          af16row

af16store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $128, R11
	DECQ    R9
	JNZ     af16grp
	VZEROUPPER
	RET

// func accF32AVX512(acc []float32, p []float32, v []byte)
TEXT ·accF32AVX512(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), R9
	MOVQ p_base+24(FP), R8
	MOVQ p_len+32(FP), R10
	MOVQ v_base+48(FP), R11
	MOVQ R9, R12
	SHLQ $2, R12
	SHRQ $6, R9

af32grp:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   R11, SI
	MOVQ   R8, DX
	MOVQ   R10, CX
	TESTQ  CX, CX
	JZ     af32store

af32row:
	VBROADCASTSS (DX), Z8
	VFMADD231PS  (SI), Z8, Z0
	VFMADD231PS  64(SI), Z8, Z1
	VFMADD231PS  128(SI), Z8, Z2
	VFMADD231PS  192(SI), Z8, Z3
	ADDQ         R12, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          af32row

af32store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $256, R11
	DECQ    R9
	JNZ     af32grp
	VZEROUPPER
	RET

// func accQ8AVX512(acc []float32, p []float32, v []byte)
// v rows of len(acc)/32 Q8_0 blocks; each block's weight p[j]·d is formed
// first, then multiplies the codes.
TEXT ·accQ8AVX512(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), R9
	MOVQ p_base+24(FP), R8
	MOVQ p_len+32(FP), R10
	MOVQ v_base+48(FP), R11
	MOVQ R9, R12
	SHRQ $5, R12
	IMUL3Q $34, R12, R12    // row bytes
	SHRQ $6, R9             // column groups: two blocks each

aq8grp:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   R11, SI
	MOVQ   R8, DX
	MOVQ   R10, CX
	TESTQ  CX, CX
	JZ     aq8store

aq8row:
	MOVWLZX      (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VMULSS       (DX), X8, X8
	VBROADCASTSS X8, Z8
	MOVWLZX      34(SI), AX
	VMOVD        AX, X9
	VCVTPH2PS    X9, X9
	VMULSS       (DX), X9, X9
	VBROADCASTSS X9, Z9
	VPMOVSXBD    2(SI), Z4
	VPMOVSXBD    18(SI), Z5
	VPMOVSXBD    36(SI), Z6
	VPMOVSXBD    52(SI), Z7
	VCVTDQ2PS    Z4, Z4
	VCVTDQ2PS    Z5, Z5
	VCVTDQ2PS    Z6, Z6
	VCVTDQ2PS    Z7, Z7
	VFMADD231PS  Z4, Z8, Z0
	VFMADD231PS  Z5, Z8, Z1
	VFMADD231PS  Z6, Z9, Z2
	VFMADD231PS  Z7, Z9, Z3
	ADDQ         R12, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          aq8row

aq8store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $68, R11
	DECQ    R9
	JNZ     aq8grp
	VZEROUPPER
	RET

// func accQ4AVX512(acc []float32, p []float32, v []byte)
// v rows of len(acc)/32 Q4_0 blocks: element i < 16 is the low nibble of
// byte i, element i+16 its high nibble, value (nibble−8)·d.
TEXT ·accQ4AVX512(SB), NOSPLIT, $0-72
	MOVQ   acc_base+0(FP), DI
	MOVQ   acc_len+8(FP), R9
	MOVQ   p_base+24(FP), R8
	MOVQ   p_len+32(FP), R10
	MOVQ   v_base+48(FP), R11
	MOVQ   R9, R12
	SHRQ   $5, R12
	IMUL3Q $18, R12, R12
	SHRQ   $6, R9
	MOVL   $15, AX
	VPBROADCASTD AX, Z14
	MOVL   $8, AX
	VPBROADCASTD AX, Z15

aq4grp:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   R11, SI
	MOVQ   R8, DX
	MOVQ   R10, CX
	TESTQ  CX, CX
	JZ     aq4store

aq4row:
	MOVWLZX      (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VMULSS       (DX), X8, X8
	VBROADCASTSS X8, Z8
	MOVWLZX      18(SI), AX
	VMOVD        AX, X9
	VCVTPH2PS    X9, X9
	VMULSS       (DX), X9, X9
	VBROADCASTSS X9, Z9
	VPMOVZXBD    2(SI), Z4
	VPMOVZXBD    20(SI), Z6
	VPSRLD       $4, Z4, Z5
	VPSRLD       $4, Z6, Z7
	VPANDD       Z14, Z4, Z4
	VPANDD       Z14, Z6, Z6
	VPSUBD       Z15, Z4, Z4
	VPSUBD       Z15, Z5, Z5
	VPSUBD       Z15, Z6, Z6
	VPSUBD       Z15, Z7, Z7
	VCVTDQ2PS    Z4, Z4
	VCVTDQ2PS    Z5, Z5
	VCVTDQ2PS    Z6, Z6
	VCVTDQ2PS    Z7, Z7
	VFMADD231PS  Z4, Z8, Z0
	VFMADD231PS  Z5, Z8, Z1
	VFMADD231PS  Z6, Z9, Z2
	VFMADD231PS  Z7, Z9, Z3
	ADDQ         R12, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          aq4row

aq4store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $36, R11
	DECQ    R9
	JNZ     aq4grp
	VZEROUPPER
	RET

// IDOT32 adds the integer dot of the 32 unsigned bytes in Y1 with the 32
// signed bytes at q into X0 lane 0 (as a sum of its 8 int32 lanes).
#define IDOT32(q) \
	VPXORD       Y0, Y0, Y0 \
	VPDPBUSD     q, Y1, Y0 \
	VEXTRACTI128 $1, Y0, X2 \
	VPADDD       X2, X0, X0 \
	VPSHUFD      $0x4E, X0, X2 \
	VPADDD       X2, X0, X0 \
	VPSHUFD      $0xB1, X0, X2 \
	VPADDD       X2, X0, X0

// SCORE folds a block's integer dot (X0, less the correction at corr)
// into the score X5: X5 += float(dot)·(dq·dk), dq at dq, dk the fp16 at kd.
#define SCORE(corr, dq, kd) \
	VMOVD     X0, AX \
	SUBL      corr, AX \
	VCVTSI2SSL AX, X3, X3 \
	MOVWLZX   kd, AX \
	VMOVD     AX, X4 \
	VCVTPH2PS X4, X4 \
	VMULSS    dq, X4, X4 \
	VMULSS    X4, X3, X3 \
	VADDSS    X3, X5, X5

// func dotsQ8AVX512(dst []float32, q []byte, d []float32, corr []int32, k []byte)
// dst[j] = Σ_b float(Σ q_b·k_jb)·(d_b·dk_jb) over the Q8_0 blocks of key
// row j; the codes go to VPDPBUSD as k+128 (unsigned), corrected by
// corr_b = 128·Σ q_b. The integer dots are exact, so the result equals the
// Go twin's bit for bit.
TEXT ·dotsQ8AVX512(SB), NOSPLIT, $0-120
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ q_base+24(FP), R8
	MOVQ d_base+48(FP), R13
	MOVQ d_len+56(FP), R9   // blocks
	MOVQ corr_base+72(FP), R14
	MOVQ k_base+96(FP), SI
	MOVL $0x80, AX
	VPBROADCASTB AX, Y15

q8key:
	TESTQ  CX, CX
	JZ     q8done
	VXORPS X5, X5, X5
	MOVQ   R8, DX
	XORQ   BX, BX

q8blk:
	VMOVDQU 2(SI), Y1
	VPXORD  Y15, Y1, Y1
	IDOT32(2(DX))
	SCORE((R14)(BX*4), (R13)(BX*4), (SI))
	ADDQ    $34, SI
	ADDQ    $34, DX
	INCQ    BX
	CMPQ    BX, R9
	JB      q8blk
	VMOVSS  X5, (DI)
	ADDQ    $4, DI
	DECQ    CX
	JMP     q8key

q8done:
	VZEROUPPER
	RET

// func dotsQ4AVX512(dst []float32, q []byte, d []float32, corr []int32, k []byte)
// As dotsQ8AVX512 for Q4_0 keys: the nibbles are the unsigned operand and
// corr_b = 8·Σ q_b.
TEXT ·dotsQ4AVX512(SB), NOSPLIT, $0-120
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ q_base+24(FP), R8
	MOVQ d_base+48(FP), R13
	MOVQ d_len+56(FP), R9
	MOVQ corr_base+72(FP), R14
	MOVQ k_base+96(FP), SI
	MOVL $0x0f, AX
	VPBROADCASTB AX, X15

q4key:
	TESTQ  CX, CX
	JZ     q4done
	VXORPS X5, X5, X5
	MOVQ   R8, DX
	XORQ   BX, BX

q4blk:
	VMOVDQU    2(SI), X1
	VPSRLW     $4, X1, X6
	VPAND      X15, X1, X1
	VPAND      X15, X6, X6
	VINSERTI128 $1, X6, Y1, Y1
	IDOT32(2(DX))
	SCORE((R14)(BX*4), (R13)(BX*4), (SI))
	ADDQ       $18, SI
	ADDQ       $34, DX
	INCQ       BX
	CMPQ       BX, R9
	JB         q4blk
	VMOVSS     X5, (DI)
	ADDQ       $4, DI
	DECQ       CX
	JMP        q4key

q4done:
	VZEROUPPER
	RET

// func dotsT256F16AVX512(dst []float32, q []float32, kt []byte)
// The transposed dot products of fp16 keys for a whole page (256 keys)
// in one pass: each dimension's row of the page is read once, front to
// back, so the page streams in order. A key's sum is formed exactly as in
// dotsTF32AVX512 (the conversion is exact).
TEXT ·dotsT256F16AVX512(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ q_base+24(FP), DX
	MOVQ q_len+32(FP), BX
	MOVQ kt_base+48(FP), SI
	ZERO16

t256dim:
	PREFETCHT0   2048(SI)
	PREFETCHT0   2112(SI)
	PREFETCHT0   2176(SI)
	PREFETCHT0   2240(SI)
	PREFETCHT0   2304(SI)
	PREFETCHT0   2368(SI)
	PREFETCHT0   2432(SI)
	PREFETCHT0   2496(SI)
	VBROADCASTSS (DX), Z16
	F16FMA8(0, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	F16FMA8(256, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ADDQ         $512, SI
	ADDQ         $4, DX
	DECQ         BX
	JNZ          t256dim
	STORE8
	VMOVUPS      Z8, 512(DI)
	VMOVUPS      Z9, 576(DI)
	VMOVUPS      Z10, 640(DI)
	VMOVUPS      Z11, 704(DI)
	VMOVUPS      Z12, 768(DI)
	VMOVUPS      Z13, 832(DI)
	VMOVUPS      Z14, 896(DI)
	VMOVUPS      Z15, 960(DI)
	VZEROUPPER
	RET

// func accF16x128AVX512(acc []float32, p []float32, v []byte)
// accF16AVX512 for rows of 128 columns in one pass (eight accumulators):
// each row is read once, front to back. Each element is accumulated
// exactly as in accF16AVX512.
TEXT ·accF16x128AVX512(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ p_base+24(FP), DX
	MOVQ p_len+32(FP), CX
	MOVQ v_base+48(FP), SI
	ZERO8
	TESTQ  CX, CX
	JZ     a128store

a128row:
	PREFETCHT0   1024(SI)
	PREFETCHT0   1088(SI)
	PREFETCHT0   1152(SI)
	PREFETCHT0   1216(SI)
	VBROADCASTSS (DX), Z16
	F16FMA8(0, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ADDQ         $256, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          a128row

a128store:
	STORE8
	VZEROUPPER
	RET

// func accF32x128AVX512(acc []float32, p []float32, v []byte)
// accF32AVX512 for rows of 128 columns in one pass (eight accumulators).
TEXT ·accF32x128AVX512(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ p_base+24(FP), DX
	MOVQ p_len+32(FP), CX
	MOVQ v_base+48(FP), SI
	ZERO8
	TESTQ  CX, CX
	JZ     b128store

b128row:
	VBROADCASTSS (DX), Z16
	VFMADD231PS  (SI), Z16, Z0
	VFMADD231PS  64(SI), Z16, Z1
	VFMADD231PS  128(SI), Z16, Z2
	VFMADD231PS  192(SI), Z16, Z3
	VFMADD231PS  256(SI), Z16, Z4
	VFMADD231PS  320(SI), Z16, Z5
	VFMADD231PS  384(SI), Z16, Z6
	VFMADD231PS  448(SI), Z16, Z7
	ADDQ         $512, SI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          b128row

b128store:
	STORE8
	VZEROUPPER
	RET

// func maxAVX512(x []float32) float32
// The largest of x, len(x) a positive multiple of 16 (no NaNs).
TEXT ·maxAVX512(SB), NOSPLIT, $0-28
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	VMOVUPS (SI), Z0
	ADDQ    $64, SI
	SUBQ    $16, CX

mloop:
	TESTQ   CX, CX
	JZ      mdone
	VMAXPS  (SI), Z0, Z0
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     mloop

mdone:
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4E, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xB1, X0, X1
	VMAXSS        X1, X0, X0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotsT4F32AVX512(dst []float32, q []float32, kt []byte, m int)
// The scores of four query rows (q: 4 rows of hd = len(q)/4) against the
// first m keys (a multiple of 64) of a transposed float32 page region:
// dst[r·256 + j]. Per pass, 64 keys × 4 rows in sixteen accumulators, so
// each key vector loaded serves four rows; every (row, key) sum takes the
// dimensions in order, one fused multiply-add each, exactly as
// dotsTF32AVX512 forms it.
TEXT ·dotsT4F32AVX512(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ q_base+24(FP), R8
	MOVQ q_len+32(FP), R9
	SHRQ $2, R9             // hd
	MOVQ kt_base+48(FP), R10
	MOVQ m+72(FP), CX
	SHRQ $6, CX             // groups of 64 keys
	MOVQ R9, R11
	SHLQ $2, R11            // bytes of a q row

t4grp:
	ZERO16
	MOVQ   R10, SI
	MOVQ   R8, DX
	MOVQ   R9, BX

t4dim:
	VMOVUPS      (SI), Z16
	VMOVUPS      64(SI), Z17
	VMOVUPS      128(SI), Z18
	VMOVUPS      192(SI), Z19
	VBROADCASTSS (DX), Z20
	VFMADD231PS  Z16, Z20, Z0
	VFMADD231PS  Z17, Z20, Z1
	VFMADD231PS  Z18, Z20, Z2
	VFMADD231PS  Z19, Z20, Z3
	VBROADCASTSS (DX)(R11*1), Z21
	VFMADD231PS  Z16, Z21, Z4
	VFMADD231PS  Z17, Z21, Z5
	VFMADD231PS  Z18, Z21, Z6
	VFMADD231PS  Z19, Z21, Z7
	VBROADCASTSS (DX)(R11*2), Z22
	VFMADD231PS  Z16, Z22, Z8
	VFMADD231PS  Z17, Z22, Z9
	VFMADD231PS  Z18, Z22, Z10
	VFMADD231PS  Z19, Z22, Z11
	LEAQ         (DX)(R11*2), AX
	VBROADCASTSS (AX)(R11*1), Z23
	VFMADD231PS  Z16, Z23, Z12
	VFMADD231PS  Z17, Z23, Z13
	VFMADD231PS  Z18, Z23, Z14
	VFMADD231PS  Z19, Z23, Z15
	ADDQ         $1024, SI  // the next dimension: 256 keys × 4 bytes
	ADDQ         $4, DX
	DECQ         BX
	JNZ          t4dim
	VMOVUPS      Z0, (DI)
	VMOVUPS      Z1, 64(DI)
	VMOVUPS      Z2, 128(DI)
	VMOVUPS      Z3, 192(DI)
	VMOVUPS      Z4, 1024(DI)
	VMOVUPS      Z5, 1088(DI)
	VMOVUPS      Z6, 1152(DI)
	VMOVUPS      Z7, 1216(DI)
	VMOVUPS      Z8, 2048(DI)
	VMOVUPS      Z9, 2112(DI)
	VMOVUPS      Z10, 2176(DI)
	VMOVUPS      Z11, 2240(DI)
	VMOVUPS      Z12, 3072(DI)
	VMOVUPS      Z13, 3136(DI)
	VMOVUPS      Z14, 3200(DI)
	VMOVUPS      Z15, 3264(DI)
	ADDQ         $256, DI
	ADDQ         $256, R10
	DECQ         CX
	JNZ          t4grp
	VZEROUPPER
	RET
