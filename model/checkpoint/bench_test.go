package checkpoint

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"trit/safetensors"
)

// BenchmarkRepack measures the one copy a ternary MLX module costs at load
// (the ternary check included): a 4096×12288 2-bit module, the shape of an
// 8B model's MLP.
func BenchmarkRepack(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	t := &testing.T{}
	m := newModule(rng, "model.layers.0.mlp.up_proj", 12288, 4096, 128, 2, true)
	w := safetensors.NewWriter()
	m.add(t, w)
	path := filepath.Join(b.TempDir(), "m.safetensors")
	if err := w.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	a, err := newAffine(m.path, quantSpec{Group: 128, Bits: 2, Mode: "affine"}, f.Tensor(m.path+".weight"), f.Tensor(m.path+".scales"), f.Tensor(m.path+".biases"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(f.Tensor(m.path + ".weight").Size())
	for b.Loop() {
		ft, err := a.ternary()
		if err != nil || ft == nil {
			b.Fatal("not ternary", err)
		}
		if _, err := a.repack(ft); err != nil {
			b.Fatal(err)
		}
	}
}
