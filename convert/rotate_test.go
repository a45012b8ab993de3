package convert

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"trit/gguf"
	"trit/hadamard"
	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/model"
	"trit/model/checkpoint"
	"trit/quant"
)

// rotated writes the float model src as a Hadamard-rotated GGUF at dst:
// every matrix but the convolution folded as W·Rᵀ (each row rotated), the
// embedding rows as R·e, explicit random signs per width, and with
// grouped the ssm_out columns in grouped value-head order first.
func rotated(t *testing.T, src, dst string, block int, grouped bool) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := model.FromGGUF(f)
	vh, err := vheadsOf(s.Meta(), "qwen35")
	if err != nil {
		t.Fatal(err)
	}
	decl := &hadamard.Declaration{Version: 1, BlockSize: block, Transform: hadamard.Transform, Axis: hadamard.Axis,
		SignMode: hadamard.SignExplicit, InverseWeightNames: []string{"token_embd.weight"}, GDNVGrouped: grouped}
	rng := rand.New(rand.NewPCG(11, uint64(block)))
	for _, tn := range s.Tensors() {
		if len(tn.Dims) != 2 || layerPart(tn.Name) == "ssm_conv1d.weight" {
			continue
		}
		if tn.Name != "token_embd.weight" {
			decl.WeightNames = append(decl.WeightNames, tn.Name)
		}
		if w := int(tn.Dims[0]); !slices.Contains(decl.SignWidths, w) {
			decl.SignWidths = append(decl.SignWidths, w)
			for range w {
				decl.SignValues = append(decl.SignValues, int8(1-2*rng.IntN(2)))
			}
		}
	}
	rot, err := hadamard.New(decl)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	widths := make([]int32, len(decl.SignWidths))
	for i, x := range decl.SignWidths {
		widths[i] = int32(x)
	}
	signs := make([]int32, len(decl.SignValues))
	for i, x := range decl.SignValues {
		signs[i] = int32(x)
	}
	for _, kv := range []gguf.KV{
		{Key: "prism.hadamard.version", Value: gguf.Uint32(1)},
		{Key: "prism.hadamard.block_size", Value: gguf.Uint32(uint32(block))},
		{Key: "prism.hadamard.transform", Value: gguf.String(hadamard.Transform)},
		{Key: "prism.hadamard.axis", Value: gguf.String(hadamard.Axis)},
		{Key: "prism.hadamard.sign_mode", Value: gguf.String(hadamard.SignExplicit)},
		{Key: "prism.hadamard.sign_widths", Value: gguf.Array(widths)},
		{Key: "prism.hadamard.sign_values", Value: gguf.Array(signs)},
		{Key: "prism.hadamard.weight_names", Value: gguf.Array(decl.WeightNames)},
		{Key: "prism.hadamard.inverse_weight_names", Value: gguf.Array(decl.InverseWeightNames)},
		{Key: "prism.hadamard.gdn_v_grouped", Value: gguf.Bool(grouped)},
	} {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range s.Tensors() {
		v, err := tn.Floats()
		if err != nil {
			t.Fatal(err)
		}
		if decl.Rotated(tn.Name) || tn.Name == "token_embd.weight" {
			k := int(tn.Dims[0])
			if grouped && layerPart(tn.Name) == "ssm_out.weight" {
				b, err := vh.reorder(tn.Name, quant.F32, tn.Dims, f32Bytes(v), true)
				if err != nil {
					t.Fatal(err)
				}
				quant.F32.Decode(v, b)
			}
			if err := rot.Prepare(k); err != nil {
				t.Fatal(err)
			}
			if err := rot.Forward(v, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.AddTensor(tn.Name, quant.F32, tn.Dims, f32Bytes(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
}

// TestRotatedPack converts rotated models (value heads grouped or tiled in
// ssm_out) to Bonsai 2 style MLX packs and back: the pack runs with the
// unrotated model's logits, and the GGUF that comes back holds the
// rotated file's tensors byte for byte.
func TestRotatedPack(t *testing.T) {
	orig := testdata.Path(t, "reference", "qwen35-f32.gguf")
	ids := logitcmp.Read(t, filepath.Join(filepath.Dir(orig), "qwen35-f32.batch.json")).IDs[:12]
	opts := model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32}
	base, err := model.Load(orig, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	for _, grouped := range []bool{true, false} {
		t.Run(map[bool]string{true: "grouped", false: "tiled"}[grouped], func(t *testing.T) {
			dir := t.TempDir()
			rot := filepath.Join(dir, "rot.gguf")
			rotated(t, orig, rot, 64, grouped)
			src := openSrc(t, rot)
			pack := filepath.Join(dir, "pack")
			if _, err := ToMLX(src, pack, Options{}); err != nil {
				t.Fatal(err)
			}
			ps, err := checkpoint.Open(pack)
			if err != nil {
				t.Fatal(err)
			}
			m, err := model.FromSource(ps, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, mode := range []string{"batch", "sequential"} {
				want, _ := model.ComputeLogits(base, ids, mode)
				got, err := model.ComputeLogits(m, ids, mode)
				if err != nil {
					t.Fatal(err)
				}
				if a := logitcmp.Compare(want.Logits, got.Logits); a.MaxAbs > 1e-3 {
					t.Errorf("%s: the pack's logits differ from the unrotated model's by %g", mode, a.MaxAbs)
				}
			}
			ps2, err := checkpoint.Open(pack)
			if err != nil {
				t.Fatal(err)
			}
			defer ps2.Close()
			back := filepath.Join(dir, "back.gguf")
			if _, err := ToGGUF(ps2, back, nil, Options{}); err != nil {
				t.Fatal(err)
			}
			b := openSrc(t, back)
			defer b.Close()
			for _, tn := range src.Tensors() {
				want, _ := tn.Data()
				got, err := b.Tensor(tn.Name).Data()
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s changed in the round trip (%v)", tn.Name, err)
				}
			}
			src.Close()
		})
	}
}

func openSrc(t *testing.T, path string) model.Source {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return model.FromGGUF(f)
}
