package kernels_test

import (
	"encoding/binary"
	"fmt"

	"trit/half"
	"trit/kernels"
	"trit/quant"
)

// A 2×128 Q2_0 matrix: row 0 is all +0.5, row 1 alternates −0.5, 0.
func ExamplePool_MatMul() {
	data := make([]byte, 2*34)
	for r := range 2 {
		blk := data[34*r : 34*r+34]
		binary.LittleEndian.PutUint16(blk, half.FromFloat32(0.5))
		code := byte(0b10_10_10_10) // four codes 2 (+1)
		if r == 1 {
			code = 0b01_00_01_00 // codes 0 (−1) and 1 (0)
		}
		for i := range 32 {
			blk[2+i] = code
		}
	}
	w, err := kernels.NewMatrix(quant.Q2_0, 2, 128, data)
	if err != nil {
		panic(err)
	}
	x := make([]float32, 128)
	for i := range x {
		x[i] = 1
	}
	p := kernels.NewPool(2)
	defer p.Close()
	dst := make([]float32, 2)
	p.MatMul(dst, w, x, 1) // int8 activations: within 1e-4 of exact
	fmt.Printf("%.2f %.2f\n", dst[0], dst[1])
	p.MatMulFloat(dst, w, x, 1) // exact
	fmt.Println(dst[0], dst[1])
	// Output:
	// 64.00 -32.00
	// 64 -32
}

// Activations quantized once serve every matrix with the same width.
func ExamplePool_Quantize() {
	p := kernels.NewPool(1)
	defer p.Close()
	data := make([]byte, 18) // one Q1_0 block: scale 1, all bits set (+1)
	binary.LittleEndian.PutUint16(data, half.FromFloat32(1))
	for i := 2; i < 18; i++ {
		data[i] = 0xff
	}
	w, _ := kernels.NewMatrix(quant.Q1_0, 1, 128, data)
	x := make([]float32, 128)
	x[0], x[127] = 2, -1
	var a kernels.Acts
	p.Quantize(&a, x, 1, 128)
	dst := make([]float32, 1)
	p.MatMulActs(dst, w, &a)
	fmt.Printf("%.3f\n", dst[0])
	// Output: 1.000
}
