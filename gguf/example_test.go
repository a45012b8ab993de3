package gguf_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"trit/gguf"
	"trit/quant"
)

func Example() {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	// Write a small file: two metadata keys and two tensors.
	w := gguf.NewWriter()
	w.AddKV("general.architecture", gguf.String("qwen3"))
	w.AddKV("qwen3.block_count", gguf.Uint32(1))
	w.AddKV("tokenizer.ggml.tokens", gguf.Array([]string{"<s>", "a", "b"}))
	w.AddTensor("output_norm.weight", quant.F32, []int64{4}, make([]byte, 16))
	w.AddTensor("token_embd.weight", quant.Q8_0, []int64{32, 3}, make([]byte, 3*34))
	if err := w.WriteFile(path); err != nil {
		log.Fatal(err)
	}

	// Open maps the file and parses only its header.
	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	arch, _ := f.String("general.architecture")
	blocks, _ := f.Uint(arch + ".block_count")
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	fmt.Println(arch, blocks, len(tokens))
	for _, t := range f.Tensors {
		data, err := t.Data() // a slice of the mapping: no copy
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Name, t.Format, t.Dims, len(data))
	}
	// Output:
	// qwen3 1 3
	// output_norm.weight F32 [4] 16
	// token_embd.weight Q8_0 [32 3] 102
}
