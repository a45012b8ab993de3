//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// The four-row plane kernels take four activation rows at once: each
// weight chunk is loaded and unpacked into its four code planes
// (Z16–Z19) once, and every activation row adds its products with the
// same operations as the one-row kernels (its correction lanes, the four
// VPDPBUSD, one conversion, the scale lanes, one multiply-add with the
// weight scales, and ZHALVE and HSUM at the end), so each row's product
// has the bits of the one-row kernel's. Activation row j's planes are
// j·astride bytes after row 0's, its lanes j·astride/4; its products
// j·dstride bytes after row 0's.

// MSETUP points DI, BX (= DI + astride), R8, R11 (= R8 + astride/4), R9
// and R10 (= R9 + astride/4) at activation row 0 and 1's first chunk,
// with R13 = astride and R12 = astride/4, and clears the sums Z28–Z31.
#define MSETUP \
	MOVQ   q+32(FP), DI \
	MOVQ   astride+56(FP), R13 \
	LEAQ   (DI)(R13*1), BX \
	MOVQ   R13, R12 \
	SHRQ   $2, R12 \
	MOVQ   sz+40(FP), R8 \
	LEAQ   (R8)(R12*1), R11 \
	MOVQ   ds+48(FP), R9 \
	LEAQ   (R9)(R12*1), R10 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31

// MPLANES unpacks the code bytes in Z5 into planes Z16–Z19 (code t of
// each byte in plane t).
#define MPLANES \
	VPANDQ Z14, Z5, Z16 \
	VPSRLW $2, Z5, Z17 \
	VPANDQ Z14, Z17, Z17 \
	VPSRLW $4, Z5, Z18 \
	VPANDQ Z14, Z18, Z18 \
	VPSRLW $6, Z5, Z19 \
	VPANDQ Z14, Z19, Z19

// MROW adds one activation row's product (planes at q, correction lanes
// at sz, scale lanes at ds; the weight scales in Z6) into facc.
#define MROW(q0, q1, q2, q3, sz, ds, iacc, facc) \
	VMOVDQU32   sz, iacc \
	VPDPBUSD    q0, Z16, iacc \
	VPDPBUSD    q1, Z17, iacc \
	VPDPBUSD    q2, Z18, iacc \
	VPDPBUSD    q3, Z19, iacc \
	VCVTDQ2PS   iacc, iacc \
	VMULPS      ds, iacc, iacc \
	VFMADD231PS Z6, iacc, facc

// MROWS4 adds the products of the four activation rows and moves to the
// next chunk.
#define MROWS4 \
	MROW((DI), 64(DI), 128(DI), 192(DI), (R8), (R9), Z20, Z28) \
	MROW((BX), 64(BX), 128(BX), 192(BX), (R8)(R12*1), (R9)(R12*1), Z21, Z29) \
	MROW((DI)(R13*2), 64(DI)(R13*2), 128(DI)(R13*2), 192(DI)(R13*2), (R8)(R12*2), (R9)(R12*2), Z22, Z30) \
	MROW((BX)(R13*2), 64(BX)(R13*2), 128(BX)(R13*2), 192(BX)(R13*2), (R11)(R12*2), (R10)(R12*2), Z23, Z31) \
	ADDQ $256, DI \
	ADDQ $256, BX \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $64, R10 \
	ADDQ $64, R11

// MSTORE stores the four rows' products at (R14), (R14)+dstride, … and
// advances R14 to the next weight row's.
#define MSTORE \
	MOVQ    dstride+72(FP), AX \
	VMOVAPS Z28, Z0 \
	ZHALVE \
	HSUM \
	MOVSS   X0, (R14) \
	VMOVAPS Z29, Z0 \
	ZHALVE \
	HSUM \
	MOVSS   X0, (R14)(AX*1) \
	VMOVAPS Z30, Z0 \
	ZHALVE \
	HSUM \
	MOVSS   X0, (R14)(AX*2) \
	VMOVAPS Z31, Z0 \
	ZHALVE \
	HSUM \
	LEAQ    (AX)(AX*2), AX \
	MOVSS   X0, (R14)(AX*1) \
	ADDQ    $4, R14

// func tq2mAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, astride int, dst *float32, dstride int)
//
// TQ2_0: nr rows of nb blocks (rb bytes) each from w on, four activation
// rows (see tq2pAVX512 for the planes).
TEXT ·tq2mAVX512(SB), NOSPLIT, $0-80
	MOVQ      w+0(FP), SI
	MOVQ      nr+16(FP), DX
	MOVQ      dst+64(FP), R14
	VMOVDQU64 mask3<>(SB), Z14
	TESTQ     DX, DX
	JZ        tq2m_end

tq2m_row:
	MSETUP
	MOVQ nb+24(FP), CX

tq2m_block:
	PREFETCHT0   PFDIST(SI)
	VMOVDQU64    (SI), Z5
	MPLANES
	VPBROADCASTW 64(SI), Y6
	VCVTPH2PS    Y6, Z6
	MROWS4
	ADDQ         $66, SI
	DECQ         CX
	JNZ          tq2m_block

	MSTORE
	DECQ DX
	JNZ  tq2m_row

tq2m_end:
	VZEROUPPER
	RET

// func q2mAVX512(w *byte, rb, nr, nb int, q *int8, sz *int32, ds *float32, astride int, dst *float32, dstride int)
//
// Q2_0 (group 128), as tq2mAVX512, for an even nb: two weight blocks per
// 256-element chunk, lanes 0–7 from the first (see q2pAVX512).
TEXT ·q2mAVX512(SB), NOSPLIT, $0-80
	MOVQ      w+0(FP), SI
	MOVQ      nr+16(FP), DX
	MOVQ      dst+64(FP), R14
	VMOVDQU64 mask3<>(SB), Z14
	TESTQ     DX, DX
	JZ        q2m_end

q2m_row:
	MSETUP
	MOVQ nb+24(FP), CX
	SHRQ $1, CX

q2m_chunk:
	PREFETCHT0   PFDIST(SI)
	VMOVDQU      2(SI), Y5
	VINSERTI64X4 $1, 36(SI), Z5, Z5
	MPLANES
	VPBROADCASTW (SI), X7
	VPBROADCASTW 34(SI), X8
	VINSERTI128  $1, X8, Y7, Y7
	VCVTPH2PS    Y7, Z6
	MROWS4
	ADDQ         $68, SI
	DECQ         CX
	JNZ          q2m_chunk

	MSTORE
	DECQ DX
	JNZ  q2m_row

q2m_end:
	VZEROUPPER
	RET
