package qwen35_test

import (
	"fmt"

	"trit/model"
	_ "trit/model/qwen35" // registers the architectures
)

// Importing the package is all a program needs: model.Load then opens
// qwen35 and qwen3next GGUF files like any other architecture.
func Example() {
	fmt.Println(model.Architectures())
	// Output: [qwen35 qwen3next]
}
