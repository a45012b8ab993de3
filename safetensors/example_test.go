package safetensors_test

import (
	"fmt"
	"os"
	"path/filepath"

	"trit/safetensors"
)

func Example() {
	dir, _ := os.MkdirTemp("", "st")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	w := safetensors.NewWriter()
	w.SetMetadata("format", "mlx")
	w.Add("norm.weight", safetensors.F32, []int64{2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})
	if err := w.WriteFile(path); err != nil {
		fmt.Println(err)
		return
	}

	f, err := safetensors.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	t := f.Tensor("norm.weight")
	v, _ := t.Floats()
	fmt.Println(t.DType, t.Shape, v, f.Metadata["format"])
	// Output: F32 [2] [1 2] mlx
}
