//go:build amd64 && !purego

#include "textflag.h"

// Every kernel here handles only whole vectors: the Go wrappers in
// kernels_amd64.go pass lengths that are multiples of the vector width and
// finish any tail themselves.

// func dotAVX2(a, b []float32) float32
// len(a) == len(b), a multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	// The sums of dotAVX512 in 256-bit halves: Y0/Y1 is its Z0, Y2/Y3
	// Z1, Y4/Y5 Z2 and Y6/Y7 Z3, folded in the same order, so both tiers
	// give the same bits.
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loop64:
	CMPQ        CX, $64
	JB          loop16
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS 64(DI), Y10, Y2
	VFMADD231PS 96(DI), Y11, Y3
	VMOVUPS     128(SI), Y8
	VMOVUPS     160(SI), Y9
	VMOVUPS     192(SI), Y10
	VMOVUPS     224(SI), Y11
	VFMADD231PS 128(DI), Y8, Y4
	VFMADD231PS 160(DI), Y9, Y5
	VFMADD231PS 192(DI), Y10, Y6
	VFMADD231PS 224(DI), Y11, Y7
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         loop64

loop16:
	CMPQ        CX, $16
	JB          fold
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         loop16

fold:
	VADDPS      Y2, Y0, Y0
	VADDPS      Y3, Y1, Y1
	VADDPS      Y6, Y4, Y4
	VADDPS      Y7, Y5, Y5
	VADDPS      Y4, Y0, Y0
	VADDPS      Y5, Y1, Y1
	VADDPS      Y1, Y0, Y0
	CMPQ        CX, $8
	JB          reduce
	VMOVUPS     (SI), Y8
	VFMADD231PS (DI), Y8, Y0

reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+48(FP)
	RET

// func dotAVX512(a, b []float32) float32
// len(a) == len(b), a multiple of 8.
TEXT ·dotAVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop64:
	CMPQ        CX, $64
	JB          loop16
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         loop64

loop16:
	CMPQ        CX, $16
	JB          reduce512
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         loop16

reduce512:
	// Fold to 256 bits before any VEX instruction touches Y0, since VEX
	// encodings clear the upper half of Z0.
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	CMPQ          CX, $8
	JB            reduce
	VMOVUPS       (SI), Y4
	VFMADD231PS   (DI), Y4, Y0

reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+48(FP)
	RET

// func axpyAVX2(dst []float32, alpha float32, x []float32)
// len(dst) == len(x), a multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	VBROADCASTSS alpha+24(FP), Y0
	MOVQ         x_base+32(FP), SI

loop32:
	CMPQ        CX, $32
	JB          loop8
	VMOVUPS     (SI), Y1
	VMOVUPS     32(SI), Y2
	VMOVUPS     64(SI), Y3
	VMOVUPS     96(SI), Y4
	VFMADD213PS (DI), Y0, Y1
	VFMADD213PS 32(DI), Y0, Y2
	VFMADD213PS 64(DI), Y0, Y3
	VFMADD213PS 96(DI), Y0, Y4
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	VMOVUPS     Y3, 64(DI)
	VMOVUPS     Y4, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         loop32

loop8:
	CMPQ        CX, $8
	JB          done
	VMOVUPS     (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         loop8

done:
	VZEROUPPER
	RET

// func axpyAVX512(dst []float32, alpha float32, x []float32)
// len(dst) == len(x), a multiple of 8.
TEXT ·axpyAVX512(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	VBROADCASTSS alpha+24(FP), Z0
	MOVQ         x_base+32(FP), SI

loop64:
	CMPQ        CX, $64
	JB          loop16
	VMOVUPS     (SI), Z1
	VMOVUPS     64(SI), Z2
	VMOVUPS     128(SI), Z3
	VMOVUPS     192(SI), Z4
	VFMADD213PS (DI), Z0, Z1
	VFMADD213PS 64(DI), Z0, Z2
	VFMADD213PS 128(DI), Z0, Z3
	VFMADD213PS 192(DI), Z0, Z4
	VMOVUPS     Z1, (DI)
	VMOVUPS     Z2, 64(DI)
	VMOVUPS     Z3, 128(DI)
	VMOVUPS     Z4, 192(DI)
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         loop64

loop16:
	CMPQ        CX, $16
	JB          tail8
	VMOVUPS     (SI), Z1
	VFMADD213PS (DI), Z0, Z1
	VMOVUPS     Z1, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         loop16

tail8:
	CMPQ        CX, $8
	JB          done
	VMOVUPS     (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS     Y1, (DI)

done:
	VZEROUPPER
	RET

// func scaleAVX2(x []float32, s float32)
// len(x) a multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ         x_base+0(FP), DI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS s+24(FP), Y0

loop32:
	CMPQ    CX, $32
	JB      loop8
	VMULPS  (DI), Y0, Y1
	VMULPS  32(DI), Y0, Y2
	VMULPS  64(DI), Y0, Y3
	VMULPS  96(DI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     loop32

loop8:
	CMPQ    CX, $8
	JB      done
	VMULPS  (DI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop8

done:
	VZEROUPPER
	RET

// func addAVX2(dst, a, b []float32)
// Equal lengths, a multiple of 8.
TEXT ·addAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX

loop32:
	CMPQ    CX, $32
	JB      loop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     loop32

loop8:
	CMPQ    CX, $8
	JB      done
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop8

done:
	VZEROUPPER
	RET

// func mulAVX2(dst, a, b []float32)
// Equal lengths, a multiple of 8.
TEXT ·mulAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX

loop32:
	CMPQ    CX, $32
	JB      loop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMULPS  (DX), Y0, Y0
	VMULPS  32(DX), Y1, Y1
	VMULPS  64(DX), Y2, Y2
	VMULPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     loop32

loop8:
	CMPQ    CX, $8
	JB      done
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop8

done:
	VZEROUPPER
	RET

// func fwht8AVX2(x []float32)
// Runs the Walsh–Hadamard stages of stride 1, 2 and 4 on every group of
// eight; len(x) a multiple of 8. Each stage adds a lane permutation to the
// vector (sums in the low lane of each pair) and subtracts the vector from
// the permutation (differences in the high lane), then blends the two, so
// every output is the same a+b or a−b the pure-Go code computes.
TEXT ·fwht8AVX2(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX

loop:
	CMPQ       CX, $8
	JB         done
	VMOVUPS    (DI), Y0
	VPERMILPS  $0xB1, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xAA, Y3, Y2, Y0
	VPERMILPS  $0x4E, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xCC, Y3, Y2, Y0
	VPERM2F128 $0x01, Y0, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xF0, Y3, Y2, Y0
	VMOVUPS    Y0, (DI)
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        loop

done:
	VZEROUPPER
	RET

// func fwhtStageAVX2(x []float32, h int)
// Butterflies (a+b, a−b) of stride h over x; h a multiple of 8 and len(x)
// a multiple of 2h.
TEXT ·fwhtStageAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	MOVQ h+24(FP), DX
	LEAQ (DI)(CX*4), R8
	SHLQ $2, DX

outer:
	CMPQ DI, R8
	JAE  done
	LEAQ (DI)(DX*1), SI
	MOVQ DI, R9
	MOVQ SI, R10

inner:
	VMOVUPS (R9), Y0
	VMOVUPS (R10), Y1
	VADDPS  Y1, Y0, Y2
	VSUBPS  Y1, Y0, Y3
	VMOVUPS Y2, (R9)
	VMOVUPS Y3, (R10)
	ADDQ    $32, R9
	ADDQ    $32, R10
	CMPQ    R9, SI
	JB      inner
	LEAQ    (SI)(DX*1), DI
	JMP     outer

done:
	VZEROUPPER
	RET

// func f16ToF32F16C(dst []float32, src []byte)
// len(src) == 2*len(dst), len(dst) a multiple of 8.
TEXT ·f16ToF32F16C(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI

loop32:
	CMPQ      CX, $32
	JB        loop8
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       loop32

loop8:
	CMPQ      CX, $8
	JB        done
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       loop8

done:
	VZEROUPPER
	RET

// func f32ToF16F16C(dst []byte, src []float32)
// len(dst) == 2*len(src), len(src) a multiple of 8. Rounding control 0 in
// the immediate selects round to nearest even, independent of MXCSR.
TEXT ·f32ToF16F16C(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX

loop8:
	CMPQ      CX, $8
	JB        done
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JMP       loop8

done:
	VZEROUPPER
	RET

// Constants of the vector exponential (see expf.go), each as 8 float32
// lanes so that AVX2 instructions can take them as memory operands.
#define EXPCONST(off, bits) \
	DATA expc<>+(off+0)(SB)/4, bits \
	DATA expc<>+(off+4)(SB)/4, bits \
	DATA expc<>+(off+8)(SB)/4, bits \
	DATA expc<>+(off+12)(SB)/4, bits \
	DATA expc<>+(off+16)(SB)/4, bits \
	DATA expc<>+(off+20)(SB)/4, bits \
	DATA expc<>+(off+24)(SB)/4, bits \
	DATA expc<>+(off+28)(SB)/4, bits

EXPCONST(0, $0x3fb8aa3b)   // log2(e)
EXPCONST(32, $0x3f318000)  // ln2 high part
EXPCONST(64, $0xb95e8083)  // ln2 low part
EXPCONST(96, $0x39506967)  // p0
EXPCONST(128, $0x3ab743ce) // p1
EXPCONST(160, $0x3c088908) // p2
EXPCONST(192, $0x3d2aa9c1) // p3
EXPCONST(224, $0x3e2aaaaa) // p4
EXPCONST(256, $0x3f000000) // p5
EXPCONST(288, $0x42b0c0a5) // expHi
EXPCONST(320, $0xc2aeac50) // expLo
EXPCONST(352, $0x3f800000) // 1.0
EXPCONST(384, $0x3f800000) // 127<<23, the exponent bias in place
EXPCONST(416, $0x80000000) // sign bit
EXPCONST(448, $0x7f800000) // +Inf
DATA expc<>+480(SB)/4, $0xff800000 // -Inf, one lane
GLOBL expc<>(SB), RODATA|NOPTR, $484

// EXPY0 sets Y0 = e^Y0 lane by lane, as expf does; it clobbers Y1–Y6.
// VMINPS returns its second Intel operand (here x) when either is NaN, so
// NaN propagates; lanes above expHi (mask Y5) become +Inf and lanes below
// expLo (mask Y6) are cleared.
#define EXPY0 \
	VMOVUPS      expc<>+288(SB), Y6 \
	VCMPPS       $1, Y0, Y6, Y5 \
	VMINPS       Y0, Y6, Y0 \
	VMOVUPS      expc<>+320(SB), Y6 \
	VCMPPS       $1, Y6, Y0, Y6 \
	VMULPS       expc<>+0(SB), Y0, Y1 \
	VROUNDPS     $0, Y1, Y1 \
	VCVTPS2DQ    Y1, Y2 \
	VMOVAPS      Y0, Y3 \
	VFNMADD231PS expc<>+32(SB), Y1, Y3 \
	VFNMADD231PS expc<>+64(SB), Y1, Y3 \
	VMOVUPS      expc<>+96(SB), Y4 \
	VFMADD213PS  expc<>+128(SB), Y3, Y4 \
	VFMADD213PS  expc<>+160(SB), Y3, Y4 \
	VFMADD213PS  expc<>+192(SB), Y3, Y4 \
	VFMADD213PS  expc<>+224(SB), Y3, Y4 \
	VFMADD213PS  expc<>+256(SB), Y3, Y4 \
	VMULPS       Y3, Y3, Y1 \
	VFMADD213PS  Y3, Y1, Y4 \
	VADDPS       expc<>+352(SB), Y4, Y4 \
	VPSLLD       $23, Y2, Y2 \
	VPADDD       expc<>+384(SB), Y2, Y2 \
	VMULPS       Y2, Y4, Y0 \
	VANDNPS      Y0, Y6, Y0 \
	VBLENDVPS    Y5, expc<>+448(SB), Y0, Y0

// func expSubSumAVX2(x []float32, m float32) float64
// Sets x[i] = e^(x[i]-m) and returns their sum, accumulated in float64;
// len(x) a multiple of 8.
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), DI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS m+24(FP), Y7
	VXORPD       Y8, Y8, Y8
	VXORPD       Y9, Y9, Y9

loop:
	CMPQ         CX, $8
	JB           done
	VMOVUPS      (DI), Y0
	VSUBPS       Y7, Y0, Y0
	EXPY0
	VMOVUPS      Y0, (DI)
	VCVTPS2PD    X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD    X2, Y2
	VADDPD       Y1, Y8, Y8
	VADDPD       Y2, Y9, Y9
	ADDQ         $32, DI
	SUBQ         $8, CX
	JMP          loop

done:
	VADDPD       Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD       X9, X8, X8
	VUNPCKHPD    X8, X8, X9
	VADDSD       X9, X8, X8
	VZEROUPPER
	MOVSD        X8, ret+32(FP)
	RET

// func sigmoidAVX2(dst, x []float32)
// dst[i] = 1/(1+e^-x[i]); equal lengths, a multiple of 8.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VMOVUPS expc<>+352(SB), Y7

loop:
	CMPQ    CX, $8
	JB      done
	VMOVUPS (SI), Y0
	VXORPS  expc<>+416(SB), Y0, Y0
	EXPY0
	VADDPS  Y7, Y0, Y0
	VDIVPS  Y0, Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET

// func siluAVX2(dst, x []float32)
// dst[i] = x[i]/(1+e^-x[i]); equal lengths, a multiple of 8.
TEXT ·siluAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI

loop:
	CMPQ    CX, $8
	JB      done
	VMOVUPS (SI), Y7
	VXORPS  expc<>+416(SB), Y7, Y0
	EXPY0
	VADDPS  expc<>+352(SB), Y0, Y0
	VDIVPS  Y0, Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET

// func swigluAVX2(dst, gate, up []float32)
// dst[i] = gate[i]/(1+e^-gate[i]) · up[i]; equal lengths, a multiple of 8.
TEXT ·swigluAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ gate_base+24(FP), SI
	MOVQ up_base+48(FP), DX

loop:
	CMPQ    CX, $8
	JB      done
	VMOVUPS (SI), Y7
	VXORPS  expc<>+416(SB), Y7, Y0
	EXPY0
	VADDPS  expc<>+352(SB), Y0, Y0
	VDIVPS  Y0, Y7, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET

// func maxAVX2(x []float32) float32
// Returns the largest element of x, or -Inf when x is empty; len(x) a
// multiple of 8. (VMAXPS returns its second Intel operand when either is
// NaN, so a NaN element may or may not win, as with the scalar code.)
TEXT ·maxAVX2(SB), NOSPLIT, $0-28
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS expc<>+480(SB), Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3

loop32:
	CMPQ   CX, $32
	JB     loop8
	VMAXPS (SI), Y0, Y0
	VMAXPS 32(SI), Y1, Y1
	VMAXPS 64(SI), Y2, Y2
	VMAXPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JMP    loop32

loop8:
	CMPQ   CX, $8
	JB     reduce
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    loop8

reduce:
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VMAXSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func sumSquaresAVX2(x []float32) float64
// Returns Σ x[i]² with each square rounded to float32 and the sum kept in
// float64, as ggml's norms compute it; len(x) a multiple of 8.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-32
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

loop16:
	CMPQ         CX, $16
	JB           loop8
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VMULPS       Y0, Y0, Y0
	VMULPS       Y1, Y1, Y1
	VCVTPS2PD    X0, Y2
	VADDPD       Y2, Y4, Y4
	VEXTRACTF128 $1, Y0, X0
	VCVTPS2PD    X0, Y2
	VADDPD       Y2, Y5, Y5
	VCVTPS2PD    X1, Y3
	VADDPD       Y3, Y6, Y6
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD    X1, Y3
	VADDPD       Y3, Y7, Y7
	ADDQ         $64, SI
	SUBQ         $16, CX
	JMP          loop16

loop8:
	CMPQ         CX, $8
	JB           reduce
	VMOVUPS      (SI), Y0
	VMULPS       Y0, Y0, Y0
	VCVTPS2PD    X0, Y2
	VADDPD       Y2, Y4, Y4
	VEXTRACTF128 $1, Y0, X0
	VCVTPS2PD    X0, Y2
	VADDPD       Y2, Y5, Y5

reduce:
	VADDPD       Y5, Y4, Y4
	VADDPD       Y7, Y6, Y6
	VADDPD       Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPD       X5, X4, X4
	VUNPCKHPD    X4, X4, X5
	VADDSD       X5, X4, X4
	VZEROUPPER
	MOVSD        X4, ret+24(FP)
	RET

// func bf16ToF32AVX2(dst []float32, src []byte)
// len(src) == 2*len(dst), len(dst) a multiple of 8. A bfloat16 is the top
// half of a float32, so widening each 16-bit lane and shifting it up by 16
// is exact for every value, NaNs included.
TEXT ·bf16ToF32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI

loop16:
	CMPQ      CX, $16
	JB        loop8
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       loop16

loop8:
	CMPQ      CX, $8
	JB        done
	VPMOVZXWD (SI), Y0
	VPSLLD    $16, Y0, Y0
	VMOVUPS   Y0, (DI)

done:
	VZEROUPPER
	RET
