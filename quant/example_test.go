package quant_test

import (
	"errors"
	"fmt"

	"trit/quant"
)

func ExampleFormat_Encode() {
	// 128 ternary weights with scale 0.25: -s, 0, +s, 0, -s, 0, +s, 0, ...
	x := make([]float32, 128)
	for i := range x {
		x[i] = float32([]int{-1, 0, 1, 0}[i%4]) * 0.25
	}
	blk := make([]byte, quant.Q2_0.BlockBytes)
	if err := quant.Q2_0.Encode(blk, x); err != nil {
		panic(err)
	}
	// d = 0.25 in fp16 first, then codes 0, 1, 2, 1 in two bits each.
	fmt.Printf("% x ... (%d bytes)\n", blk[:4], len(blk))

	y := make([]float32, 128)
	if err := quant.Q2_0.Decode(y, blk); err != nil {
		panic(err)
	}
	fmt.Println(y[:6])
	// Output:
	// 00 34 64 64 ... (34 bytes)
	// [-0.25 0 0.25 0 -0.25 0]
}

func ExampleTranscode() {
	// Two rows of 256 ternary weights in Prism's PQ2_0 (group 128)...
	x := make([]float32, 512)
	for i := range x {
		x[i] = float32(i%3-1) * 0.5
	}
	pq := make([]byte, 4*quant.PQ2_0.BlockBytes)
	if err := quant.PQ2_0.Encode(pq, x); err != nil {
		panic(err)
	}

	// ...repacked as PTQ1_0 (1.75 bits per weight) and back, losslessly.
	ptq, err := quant.Transcode(quant.PTQ1_0, quant.PQ2_0, pq, 256)
	if err != nil {
		panic(err)
	}
	back, err := quant.Transcode(quant.PQ2_0, quant.PTQ1_0, ptq, 256)
	fmt.Println(len(pq), len(ptq), string(back) == string(pq), err)

	// Q1_0 has no zero: that would lose information.
	_, err = quant.Transcode(quant.Q1_0, quant.PQ2_0, pq, 256)
	var te *quant.TranscodeError
	fmt.Println(errors.Is(err, quant.ErrLossy), errors.As(err, &te) && te.Block == 0)
	// Output:
	// 136 112 true <nil>
	// true true
}

func ExampleDequantize() {
	// One Q8_0 block: d = 0.5 (fp16 0x3800), codes 1, -2, 0, ...
	blk := make([]byte, quant.Q8_0.BlockBytes)
	blk[1], blk[2], blk[3] = 0x38, 1, 0xfe
	x, err := quant.Dequantize(quant.Q8_0, blk, 32)
	fmt.Println(x[:3], err)

	_, err = quant.Dequantize(quant.Q8_0, blk, 64)
	fmt.Println(errors.Is(err, quant.ErrSize))
	// Output:
	// [0.5 -1 0] <nil>
	// true
}
