package inspect_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"trit/gguf"
	"trit/inspect"
	"trit/quant"
)

func Example() {
	// A tiny model file, built in memory.
	w := gguf.NewWriter()
	w.AddKV("general.architecture", gguf.String("qwen3"))
	w.AddKV("qwen3.block_count", gguf.Uint32(1))
	w.AddTensor("blk.0.ffn_up.weight", quant.Q2_0, []int64{256, 16}, make([]byte, 16*2*34))
	w.AddTensor("output_norm.weight", quant.F32, []int64{256}, make([]byte, 1024))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	f, err := gguf.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}

	r := inspect.New(f)
	fmt.Printf("%s: %.3f bits/weight in the linear layers\n", r.Architecture, r.Linear.Bits)
	js, _ := json.Marshal(r.Linear)
	fmt.Println(string(js))
	r.WriteText(os.Stdout)
	// Output:
	// qwen3: 2.125 bits/weight in the linear layers
	// {"tensors":1,"elements":4096,"bytes":1088,"bits_per_weight":2.125,"ternary_elements":4096,"ternary_fraction":1}
	// GGUF           v3, 2,336 bytes, alignment 32, data at 224
	// architecture   qwen3
	// parameters     4,352 in 2 tensors, 3.8824 bits/weight, 94.1% ternary
	// linear layers  4,096 in 1 tensors, 2.1250 bits/weight, 100.0% ternary
	//
	// hyperparameters
	//   qwen3.block_count  uint32  1
	//
	// types   tensors  elements  bytes  bits/weight
	//   Q2_0  1        4,096     1,088  2.1250
	//   F32   1        256       1,024  32.0000
	//
	// tensors                type  shape      bytes
	//   blk.0.ffn_up.weight  Q2_0  [256, 16]  1,088
	//   output_norm.weight   F32   [256]      1,024
	//
	// warnings
	//   1 tensors of type 42 read as Q2_0 (group 128); blk.0.ffn_up.weight: 34-byte blocks fit the 1088-byte extent
}
