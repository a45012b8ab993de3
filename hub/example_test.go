package hub_test

import (
	"fmt"

	"trit/hub"
)

func ExampleChoose() {
	listing := []hub.File{
		{Path: "README.md"},
		{Path: "Ternary-Bonsai-2-27B-PQ2_0.gguf"},
		{Path: "Ternary-Bonsai-2-27B-PTQ1_0.gguf"},
		{Path: "Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf"},
	}
	p, _ := hub.Choose("prism-ml/Ternary-Bonsai-2-27B-gguf", listing, "")
	fmt.Println(p.Tag, p.Default, p.Files[0].Path)
	p, _ = hub.Choose("prism-ml/Ternary-Bonsai-2-27B-gguf", listing, "pq2_0")
	fmt.Println(p.Tag, p.Default)
	_, err := hub.Choose("prism-ml/Ternary-Bonsai-2-27B-gguf", listing, "Q4_K_M")
	fmt.Println(err)
	// Output:
	// PTQ1_0 true Ternary-Bonsai-2-27B-PTQ1_0.gguf
	// PQ2_0 false
	// hub: prism-ml/Ternary-Bonsai-2-27B-gguf has no model file matching "Q4_K_M"; it has: Ternary-Bonsai-2-27B-PQ2_0.gguf, Ternary-Bonsai-2-27B-PTQ1_0.gguf
}
