// Constants shared by the assembly kernels; each .s file includes its own
// static copy. Byte masks of 3, 2 and 0x0f (nibbles), int16 ones, per-qword shift
// counts that unpack Q2_0 codes (qword i of a broadcast holds code i of each
// byte after the shift), the VPERMQ index that spreads two 8-byte groups
// over the halves of a ZMM, the Q1_0 bit-expansion tables, the trit
// thresholds (p > 85, p > 170; AVX2 compares signed after flipping the top
// bit: 0xD5 = 85^0x80, 0x2A = 170^0x80) and VPMASKMOVD masks of 7 and 5
// dwords (PTQ1_0's 28-byte block, TQ1_0's 20 bytes of stage B and qh).

DATA mask3<>+0(SB)/8, $0x0303030303030303
DATA mask3<>+8(SB)/8, $0x0303030303030303
DATA mask3<>+16(SB)/8, $0x0303030303030303
DATA mask3<>+24(SB)/8, $0x0303030303030303
DATA mask3<>+32(SB)/8, $0x0303030303030303
DATA mask3<>+40(SB)/8, $0x0303030303030303
DATA mask3<>+48(SB)/8, $0x0303030303030303
DATA mask3<>+56(SB)/8, $0x0303030303030303
GLOBL mask3<>(SB), RODATA|NOPTR, $64

DATA m0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA m0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA m0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA m0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL m0f<>(SB), RODATA|NOPTR, $32

DATA twos<>+0(SB)/8, $0x0202020202020202
DATA twos<>+8(SB)/8, $0x0202020202020202
DATA twos<>+16(SB)/8, $0x0202020202020202
DATA twos<>+24(SB)/8, $0x0202020202020202
DATA twos<>+32(SB)/8, $0x0202020202020202
DATA twos<>+40(SB)/8, $0x0202020202020202
DATA twos<>+48(SB)/8, $0x0202020202020202
DATA twos<>+56(SB)/8, $0x0202020202020202
GLOBL twos<>(SB), RODATA|NOPTR, $64

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA shiftq<>+0(SB)/8, $0
DATA shiftq<>+8(SB)/8, $2
DATA shiftq<>+16(SB)/8, $4
DATA shiftq<>+24(SB)/8, $6
DATA shiftq<>+32(SB)/8, $0
DATA shiftq<>+40(SB)/8, $2
DATA shiftq<>+48(SB)/8, $4
DATA shiftq<>+56(SB)/8, $6
GLOBL shiftq<>(SB), RODATA|NOPTR, $64

DATA permq<>+0(SB)/8, $0
DATA permq<>+8(SB)/8, $0
DATA permq<>+16(SB)/8, $0
DATA permq<>+24(SB)/8, $0
DATA permq<>+32(SB)/8, $1
DATA permq<>+40(SB)/8, $1
DATA permq<>+48(SB)/8, $1
DATA permq<>+56(SB)/8, $1
GLOBL permq<>(SB), RODATA|NOPTR, $64

DATA q1shuf<>+0(SB)/8, $0x0000000000000000
DATA q1shuf<>+8(SB)/8, $0x0101010101010101
DATA q1shuf<>+16(SB)/8, $0x0202020202020202
DATA q1shuf<>+24(SB)/8, $0x0303030303030303
GLOBL q1shuf<>(SB), RODATA|NOPTR, $32

DATA q1bits<>+0(SB)/8, $0x8040201008040201
DATA q1bits<>+8(SB)/8, $0x8040201008040201
DATA q1bits<>+16(SB)/8, $0x8040201008040201
DATA q1bits<>+24(SB)/8, $0x8040201008040201
GLOBL q1bits<>(SB), RODATA|NOPTR, $32

DATA c85<>+0(SB)/8, $0x5555555555555555
DATA c85<>+8(SB)/8, $0x5555555555555555
DATA c85<>+16(SB)/8, $0x5555555555555555
DATA c85<>+24(SB)/8, $0x5555555555555555
DATA c85<>+32(SB)/8, $0x5555555555555555
DATA c85<>+40(SB)/8, $0x5555555555555555
DATA c85<>+48(SB)/8, $0x5555555555555555
DATA c85<>+56(SB)/8, $0x5555555555555555
GLOBL c85<>(SB), RODATA|NOPTR, $64

DATA c170<>+0(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+8(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+16(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+24(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+32(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+40(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+48(SB)/8, $0xaaaaaaaaaaaaaaaa
DATA c170<>+56(SB)/8, $0xaaaaaaaaaaaaaaaa
GLOBL c170<>(SB), RODATA|NOPTR, $64

DATA x80<>+0(SB)/8, $0x8080808080808080
DATA x80<>+8(SB)/8, $0x8080808080808080
DATA x80<>+16(SB)/8, $0x8080808080808080
DATA x80<>+24(SB)/8, $0x8080808080808080
GLOBL x80<>(SB), RODATA|NOPTR, $32

DATA s85<>+0(SB)/8, $0xd5d5d5d5d5d5d5d5
DATA s85<>+8(SB)/8, $0xd5d5d5d5d5d5d5d5
DATA s85<>+16(SB)/8, $0xd5d5d5d5d5d5d5d5
DATA s85<>+24(SB)/8, $0xd5d5d5d5d5d5d5d5
GLOBL s85<>(SB), RODATA|NOPTR, $32

DATA s170<>+0(SB)/8, $0x2a2a2a2a2a2a2a2a
DATA s170<>+8(SB)/8, $0x2a2a2a2a2a2a2a2a
DATA s170<>+16(SB)/8, $0x2a2a2a2a2a2a2a2a
DATA s170<>+24(SB)/8, $0x2a2a2a2a2a2a2a2a
GLOBL s170<>(SB), RODATA|NOPTR, $32

DATA mask7d<>+0(SB)/8, $0xffffffffffffffff
DATA mask7d<>+8(SB)/8, $0xffffffffffffffff
DATA mask7d<>+16(SB)/8, $0xffffffffffffffff
DATA mask7d<>+24(SB)/8, $0x00000000ffffffff
GLOBL mask7d<>(SB), RODATA|NOPTR, $32

DATA mask5d<>+0(SB)/8, $0xffffffffffffffff
DATA mask5d<>+8(SB)/8, $0xffffffffffffffff
DATA mask5d<>+16(SB)/8, $0x00000000ffffffff
DATA mask5d<>+24(SB)/8, $0x0000000000000000
GLOBL mask5d<>(SB), RODATA|NOPTR, $32

// Horizontal sum of Y0 into X0.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS  X1, X0, X0 \
	VMOVHLPS X0, X1, X1 \
	VADDPS  X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS  X1, X0, X0

// ZHALVE folds the upper half of Z0 into Y0.
#define ZHALVE \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS        Y1, Y0, Y0

// PFDIST is how far ahead of the weights the row kernels prefetch.
#define PFDIST 1024
