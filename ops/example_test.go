package ops_test

import (
	"fmt"

	"trit/ops"
)

// A Qwen3 attention layer rotates the first Dims of every query and key
// head; the table for a position is computed once and reused by all layers.
func ExampleRope() {
	rope, err := ops.NewRope(ops.RopeConfig{
		HeadDim: 4, Base: 10000, Neox: true,
		Scaling: ops.RopeScalingYaRN, Factor: 4, OrigCtx: 64,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	q := []float32{1, 0, 0, 0, 0, 1, 0, 0} // two heads
	tab := rope.Table(0, nil)              // position 0: no rotation, only YaRN's magnitude
	rope.ApplyTable(q, 2, tab)
	fmt.Printf("%.4f\n", q)
	// Output:
	// [1.1386 0.0000 0.0000 0.0000 0.0000 1.1386 0.0000 0.0000]
}

func ExampleRMSNorm() {
	x := []float32{1, 2, 3, 4}
	ops.RMSNorm(x, x, nil, 0)
	fmt.Printf("%.4f\n", x)
	// Output:
	// [0.3651 0.7303 1.0954 1.4606]
}

// The Hadamard rotation of a Ternary Bonsai 2 model: signs first, then the
// blockwise transform; HadamardInverse undoes it.
func ExampleHadamardForward() {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	signs := []float32{1, -1, 1, 1, -1, 1, 1, 1}
	if err := ops.HadamardForward(x, 4, signs); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.1f\n", x)
	if err := ops.HadamardInverse(x, 4, signs); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.1f\n", x)
	// Output:
	// [3.0 1.0 -4.0 2.0 8.0 -6.0 -7.0 -5.0]
	// [1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0]
}

func ExampleSoftmax() {
	scores := []float32{ops.Dot([]float32{1, 2}, []float32{3, 4}), 11, 10}
	ops.Softmax(scores)
	fmt.Printf("%.4f\n", scores)
	// Output:
	// [0.4223 0.4223 0.1554]
}

func ExampleF16ToF32() {
	src := []byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00} // 1, -2, the smallest subnormal
	dst := make([]float32, 3)
	ops.F16ToF32(dst, src)
	fmt.Println(dst)
	// Output:
	// [1 -2 5.9604645e-08]
}
