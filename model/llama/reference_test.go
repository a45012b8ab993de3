package llama_test

import (
	"path/filepath"
	"strings"
	"testing"

	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/model"
	_ "trit/model/llama"
)

// TestReferenceLogits checks every qwen3 model of the reference set against
// the logits llama.cpp computed, in batch and token-by-token mode, with the
// criteria of the reference README.
func TestReferenceLogits(t *testing.T) {
	dir := testdata.Path(t, "reference")
	files, _ := filepath.Glob(filepath.Join(dir, "qwen3-*.gguf"))
	if len(files) == 0 {
		t.Skip("no qwen3 reference models")
	}
	for _, path := range files {
		stem := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(stem, func(t *testing.T) {
			m, err := model.Load(path, model.Options{Threads: 2, KVType: model.KVF32})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, mode := range []string{"batch", "sequential"} {
				ref := logitcmp.Read(t, filepath.Join(dir, stem+"."+mode+".json"))
				got, err := model.ComputeLogits(m, ref.IDs, mode)
				if err != nil {
					t.Fatal(err)
				}
				a := logitcmp.Compare(ref.Logits, got.Logits)
				t.Logf("%s: max |Δ| %.2e, mean KL %.4f, max KL %.4f, top-1 %d/%d", mode, a.MaxAbs, a.MeanKL, a.MaxKL, a.Top1, len(ref.IDs))
				if strings.HasSuffix(stem, "-f32") {
					if a.MaxAbs > 1e-3 {
						t.Errorf("%s: max |Δ| = %g > 1e-3", mode, a.MaxAbs)
					}
					continue
				}
				if a.MeanKL > 0.03 || a.MaxKL > 0.2 || a.Top1 < 32 {
					t.Errorf("%s: mean KL %.4f (≤ 0.03), max KL %.4f (≤ 0.2), top-1 %d/40 (≥ 32)", mode, a.MeanKL, a.MaxKL, a.Top1)
				}
			}
		})
	}
}

// TestExactPathMatchesFloat runs the group-64 and group-128 Q2_0 files on
// exactly dequantized weights with float activations: Q2_0 is lossless for
// these ternary weights, so the logits must match the float file's
// reference within 1e-3.
func TestExactPathMatchesFloat(t *testing.T) {
	dir := testdata.Path(t, "reference")
	for _, stem := range []string{"qwen3-tern-Q2_0", "qwen3-tern-Q2_0g128"} {
		t.Run(stem, func(t *testing.T) {
			m, err := model.Load(filepath.Join(dir, stem+".gguf"), model.Options{Threads: 2, Exact: true, KVType: model.KVF32})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ref := logitcmp.Read(t, filepath.Join(dir, "qwen3-tern-f32.batch.json"))
			got, err := model.ComputeLogits(m, ref.IDs, "batch")
			if err != nil {
				t.Fatal(err)
			}
			if a := logitcmp.Compare(ref.Logits, got.Logits); a.MaxAbs > 1e-3 {
				t.Errorf("max |Δ| = %g > 1e-3", a.MaxAbs)
			}
		})
	}
}
