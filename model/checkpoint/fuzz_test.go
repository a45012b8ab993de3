package checkpoint

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConfig opens a small pack under fuzzed config.json and hadamard.json
// contents: every input is refused with an error or opens, never a panic,
// and an opened source's tensors all decode.
func FuzzConfig(f *testing.F) {
	cfg, _ := json.Marshal(qwen3Config())
	f.Add(cfg, []byte(`{"version":1,"block_size":64,"transform":"normalized-sylvester-walsh-hadamard","axis":"input-last-dimension","sign_mode":"identity"}`))
	f.Add([]byte(`{"model_type":"prism_hadamard_qwen35","text_config":{"hidden_size":256},"modules":[{"path":"model.embed_tokens","block":64,"embedding":true}]}`), []byte(`{}`))
	f.Add([]byte(`{"model_type":"qwen3","quantization":{"bits":2,"group_size":128,"model.layers.0.mlp.up_proj":{"bits":8}}}`), []byte(`null`))
	rng := rand.New(rand.NewPCG(9, 9))
	mods := []*module{
		newModule(rng, "model.layers.0.mlp.up_proj", 64, 256, 32, 4, false),
		newModule(rng, "model.embed_tokens", 64, 256, 64, 2, true),
	}
	dir := f.TempDir()
	t := &testing.T{}
	writePack(t, dir, qwen3Config(), mods, nil)
	f.Fuzz(func(t *testing.T, config, had []byte) {
		d := t.TempDir()
		if err := os.Link(filepath.Join(dir, "model.safetensors"), filepath.Join(d, "model.safetensors")); err != nil {
			t.Skip(err)
		}
		os.WriteFile(filepath.Join(d, "config.json"), config, 0o644)
		os.WriteFile(filepath.Join(d, HadamardFile), had, 0o644)
		src, err := Open(d)
		if err != nil {
			return
		}
		defer src.Close()
		for _, tn := range src.Tensors() {
			if _, err := tn.Floats(); err != nil {
				t.Fatalf("%s: opened but does not decode: %v", tn.Name, err)
			}
		}
	})
}
