package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"trit/gguf"
	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/model"
	"trit/model/checkpoint"
	_ "trit/model/llama"
	_ "trit/model/qwen35"
	"trit/quant"
	"trit/safetensors"
)

// writeHF writes the float GGUF model at path as a Hugging Face checkpoint
// folder: F32 safetensors under HF names and shapes, value heads in HF's
// grouped order, Qwen3.5 norms zero-centred (w−1), A_log for ssm_a,
// conv1d as [C, 1, K], config.json and the tokenizer files.
func writeHF(t *testing.T, path, dir string) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	src := model.FromGGUF(f)
	defer src.Close()
	meta := src.Meta()
	arch, _ := meta.String("general.architecture")
	vh, err := vheadsOf(meta, arch)
	if err != nil {
		t.Fatal(err)
	}
	w := safetensors.NewWriter()
	for _, tn := range src.Tensors() {
		name, ok := checkpoint.HFName(tn.Name, arch)
		if !ok {
			t.Fatalf("%s has no HF name", tn.Name)
		}
		name = strings.Replace(name, "language_model.model.", "model.language_model.", 1)
		name = strings.Replace(name, "language_model.lm_head", "lm_head", 1)
		v, err := tn.Floats()
		if err != nil {
			t.Fatal(err)
		}
		b, err := vh.reorder(tn.Name, quant.F32, tn.Dims, f32Bytes(v), true)
		if err != nil {
			t.Fatal(err)
		}
		shape := make([]int64, len(tn.Dims))
		for i, d := range tn.Dims {
			shape[len(shape)-1-i] = d
		}
		part := layerPart(tn.Name)
		for i := range len(b) / 4 {
			x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			switch {
			case part == "ssm_a":
				var ok bool
				if x, ok = checkpoint.ALog(x); !ok {
					t.Fatalf("%s: no float32 A_log", tn.Name)
				}
			case arch == "qwen35" && strings.HasSuffix(part, "norm.weight") && part != "ssm_norm.weight":
				x -= 1 // exact: the weights are near 1 (Sterbenz)
			}
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if part == "ssm_conv1d.weight" {
			shape = []int64{tn.Dims[1], 1, tn.Dims[0]}
		}
		if err := w.Add(name, safetensors.F32, shape, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(filepath.Join(dir, safetensors.SingleFile)); err != nil {
		t.Fatal(err)
	}
	cfg, err := mlxConfig(meta, arch, src.Tensor("output.weight") == nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	delete(cfg, "gdn_activation_layout") // HF's own configs do not say it
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		t.Fatal(err)
	}
	if err := writeTokenizer(dir, meta); err != nil {
		t.Fatal(err)
	}
}

// TestHFCheckpoint writes the *-tern-f32 reference models as HF
// checkpoints, converts them to GGUF, and checks the float conversion's
// logits against llama.cpp's reference (1e-3) and the ternary
// conversions' tensors against the reference files llama.cpp quantized
// from the same weights, byte for byte.
func TestHFCheckpoint(t *testing.T) {
	ref := testdata.Path(t, "reference")
	for _, stem := range []string{"qwen3-tern", "qwen35-tern"} {
		t.Run(stem, func(t *testing.T) {
			hf := filepath.Join(t.TempDir(), "hf")
			if err := writeFolder(hf, func(tmp string) error { writeHF(t, filepath.Join(ref, stem+"-f32.gguf"), tmp); return nil }); err != nil {
				t.Fatal(err)
			}
			src, err := checkpoint.Open(hf)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if c := src.Layout().Container; c != "Hugging Face checkpoint" {
				t.Errorf("container %q", c)
			}
			out := filepath.Join(t.TempDir(), "f32.gguf")
			if _, err := ToGGUF(src, out, nil, Options{}); err != nil {
				t.Fatal(err)
			}
			sameTokenizer(t, filepath.Join(ref, stem+"-f32.gguf"), out)
			// The converted file, and the folder run directly (-m DIR).
			for _, load := range []func() (model.Model, error){
				func() (model.Model, error) {
					return model.Load(out, model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32})
				},
				func() (model.Model, error) {
					s, err := checkpoint.Open(hf)
					if err != nil {
						return nil, err
					}
					return model.FromSource(s, model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32})
				},
			} {
				m, err := load()
				if err != nil {
					t.Fatal(err)
				}
				for _, mode := range []string{"batch", "sequential"} {
					want := logitcmp.Read(t, filepath.Join(ref, stem+"-f32."+mode+".json"))
					got, err := model.ComputeLogits(m, want.IDs, mode)
					if err != nil {
						t.Fatal(err)
					}
					if a := logitcmp.Compare(want.Logits, got.Logits); a.MaxAbs > 1e-3 {
						t.Errorf("%s: max |Δ| %g > 1e-3", mode, a.MaxAbs)
					}
				}
				m.Close()
			}
			for _, c := range []struct {
				typ  *quant.Format
				file string
			}{{quant.Q2_0g64, "Q2_0"}, {quant.Q2_0, "Q2_0g128"}} {
				out := filepath.Join(t.TempDir(), c.file+".gguf")
				rep, err := ToGGUF(src, out, c.typ, Options{})
				if err != nil {
					t.Fatalf("%s: %v", c.file, err)
				}
				if len(rep.Lossy) > 0 {
					t.Errorf("%s: %v", c.file, rep.Lossy)
				}
				sameAs(t, filepath.Join(ref, stem+"-"+c.file+".gguf"), out)
			}
			// The scales are fp16 values (that is why Q2_0 holds these
			// weights exactly), so F16 matrices are lossless; BF16 ones,
			// with 8 significant bits, are not.
			if rep, err := ToGGUF(src, filepath.Join(t.TempDir(), "h.gguf"), quant.F16, Options{}); err != nil || len(rep.Lossy) > 0 {
				t.Errorf("F16: %v, report %v", err, rep)
			}
			if _, err := ToGGUF(src, filepath.Join(t.TempDir(), "b.gguf"), quant.BF16, Options{}); !errors.Is(err, ErrLossy) {
				t.Errorf("BF16 without AllowLossy: %v, want ErrLossy", err)
			}
			if rep, err := ToGGUF(src, filepath.Join(t.TempDir(), "b.gguf"), quant.BF16, Options{AllowLossy: true}); err != nil || len(rep.Lossy) == 0 {
				t.Errorf("BF16 with AllowLossy: %v, report %v", err, rep)
			}
			if _, err := ToGGUF(src, filepath.Join(t.TempDir(), "x.gguf"), quant.TQ2_0, Options{}); err == nil {
				t.Error("TQ2_0 (one scale per 256 of these 128-scale weights) converted without --allow-lossy")
			}
			rep, err := ToGGUF(src, filepath.Join(t.TempDir(), "x.gguf"), quant.TQ2_0, Options{AllowLossy: true})
			if err != nil || len(rep.Lossy) == 0 {
				t.Errorf("TQ2_0 with AllowLossy: %v, report %v", err, rep)
			}
		})
	}
}

// sameAs checks that the GGUF file got holds every tensor of want with
// identical format, dims and bytes.
func sameAs(t *testing.T, want, got string) {
	t.Helper()
	a, err := gguf.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := gguf.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	diff := 0
	for _, ta := range a.Tensors {
		tb := b.Tensor(ta.Name)
		if tb == nil {
			t.Errorf("%s: %s missing", filepath.Base(want), ta.Name)
			continue
		}
		da, _ := ta.Data()
		db, _ := tb.Data()
		if ta.Format != tb.Format || !bytes.Equal(da, db) {
			diff++
			if diff <= 5 {
				t.Errorf("%s: %s is %s, want %s; bytes equal %v", filepath.Base(want), ta.Name, tb.Format, ta.Format, bytes.Equal(da, db))
			}
		}
	}
	if len(a.Tensors) != len(b.Tensors) {
		t.Errorf("%d tensors, want %d", len(b.Tensors), len(a.Tensors))
	}
}

// sameTokenizer checks that got carries want's tokenizer keys.
func sameTokenizer(t *testing.T, want, got string) {
	t.Helper()
	a, err := gguf.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := gguf.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, k := range []string{"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
		"tokenizer.ggml.merges", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.bos_token_id", "tokenizer.chat_template"} {
		va, oka := a.Lookup(k)
		vb, okb := b.Lookup(k)
		if oka != okb || va.String() != vb.String() {
			t.Errorf("%s: %.80v, want %.80v", k, vb, va)
		}
	}
}
