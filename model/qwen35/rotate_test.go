package qwen35_test

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"trit/gguf"
	"trit/hadamard"
	"trit/internal/testdata"
	"trit/model"
	"trit/quant"
)

// rotation describes how rotateFile folds a Hadamard rotation into a model.
type rotation struct {
	block    int
	identity bool // no sign vectors
	grouped  bool // ssm_out input columns in grouped value-head order
	seed     uint64
	// edit, if set, changes the declaration keys before they are written.
	edit func(keys *[]gguf.KV)
}

// rotatable reports whether a tensor is a matrix the test folds: every 2-D
// weight but the embedding and the convolution kernel.
func rotatable(t *gguf.Tensor) bool {
	return len(t.Dims) == 2 && t.Name != "token_embd.weight" && !strings.HasSuffix(t.Name, "ssm_conv1d.weight")
}

func setKV(keys *[]gguf.KV, key string, v gguf.Value) {
	for i := range *keys {
		if (*keys)[i].Key == key {
			(*keys)[i].Value = v
			return
		}
	}
	*keys = append(*keys, gguf.KV{Key: key, Value: v})
}

func delKV(keys *[]gguf.KV, key string) {
	*keys = slices.DeleteFunc(*keys, func(kv gguf.KV) bool { return kv.Key == key })
}

// rotateFile writes to dst the model src with every foldable matrix stored
// as W′ = W·Rᵀ, the embedding as R·e, and the `prism.hadamard.*` keys, all
// tensors in F32 so that the rotation is exact up to rounding.
func rotateFile(t testing.TB, src, dst string, r rotation) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	arch, _ := f.String("general.architecture")
	hk, _ := f.Uint(arch + ".ssm.group_count")
	hv, _ := f.Uint(arch + ".ssm.time_step_rank")
	dv, _ := f.Uint(arch + ".ssm.state_size")

	// Collect the input widths and draw one sign vector per width.
	var widths []int
	var names []string
	for _, tn := range f.Tensors {
		if rotatable(tn) {
			names = append(names, tn.Name)
			if w := int(tn.Dims[0]); !slices.Contains(widths, w) {
				widths = append(widths, w)
			}
		}
	}
	if emb := int(f.Tensor("token_embd.weight").Dims[0]); !slices.Contains(widths, emb) {
		widths = append(widths, emb)
	}
	rng := rand.New(rand.NewPCG(r.seed, 3))
	decl := &hadamard.Declaration{
		Version: 1, BlockSize: r.block, Transform: hadamard.Transform, Axis: hadamard.Axis,
		SignMode: hadamard.SignIdentity, WeightNames: names,
		InverseWeightNames: []string{"token_embd.weight"}, GDNVGrouped: r.grouped,
	}
	var signs []int32
	if !r.identity {
		decl.SignMode = hadamard.SignExplicit
		decl.SignWidths = widths
		for _, w := range widths {
			for range w {
				s := int8(1)
				if rng.IntN(2) == 0 {
					s = -1
				}
				decl.SignValues = append(decl.SignValues, s)
				signs = append(signs, int32(s))
			}
		}
	}
	rot, err := hadamard.New(decl)
	if err != nil {
		t.Fatal(err)
	}

	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	keys := []gguf.KV{
		{Key: "prism.hadamard.version", Value: gguf.Uint32(1)},
		{Key: "prism.hadamard.block_size", Value: gguf.Uint32(uint32(r.block))},
		{Key: "prism.hadamard.transform", Value: gguf.String(hadamard.Transform)},
		{Key: "prism.hadamard.axis", Value: gguf.String(hadamard.Axis)},
		{Key: "prism.hadamard.sign_mode", Value: gguf.String(decl.SignMode)},
	}
	if !r.identity {
		ws := make([]int32, len(widths))
		for i, x := range widths {
			ws[i] = int32(x)
		}
		keys = append(keys,
			gguf.KV{Key: "prism.hadamard.sign_widths", Value: gguf.Array(ws)},
			gguf.KV{Key: "prism.hadamard.sign_values", Value: gguf.Array(signs)})
	}
	keys = append(keys,
		gguf.KV{Key: "prism.hadamard.weight_names", Value: gguf.Array(names)},
		gguf.KV{Key: "prism.hadamard.inverse_weight_names", Value: gguf.Array([]string{"token_embd.weight"})},
		gguf.KV{Key: "prism.hadamard.gdn_v_grouped", Value: gguf.Bool(r.grouped)})
	if r.edit != nil {
		r.edit(&keys)
	}
	for _, kv := range keys {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}

	for _, tn := range f.Tensors {
		data, err := tn.Data()
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, tn.Elems())
		if err := tn.Format.Decode(v, data); err != nil {
			t.Fatal(err)
		}
		if rotatable(tn) || tn.Name == "token_embd.weight" {
			k := int(tn.Dims[0])
			// qwen3next files keep the grouped order everywhere already.
			if r.grouped && arch == "qwen35" && strings.HasSuffix(tn.Name, "ssm_out.weight") {
				v = toGroupedColumns(v, k, int(hk), int(hv), int(dv))
			}
			if err := rot.Prepare(k); err != nil {
				t.Fatal(err)
			}
			if err := rot.Forward(v, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.AddTensor(tn.Name, quant.F32, tn.Dims, f32bytes(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
}

// toGroupedColumns moves the input columns of ssm_out (rows of k values,
// value heads in tiled order i·hk+g) to grouped order g·r+i.
func toGroupedColumns(v []float32, k, hk, hv, dv int) []float32 {
	out := make([]float32, len(v))
	r := hv / hk
	for row := 0; row < len(v); row += k {
		for i := range r {
			for g := range hk {
				copy(out[row+(g*r+i)*dv:row+(g*r+i+1)*dv], v[row+(i*hk+g)*dv:row+(i*hk+g+1)*dv])
			}
		}
	}
	return out
}

// checkRotated loads the rotated file and compares its logits, in batch
// and token-by-token mode, with the original model's.
func checkRotated(t *testing.T, orig, rotated string, ids []int) {
	t.Helper()
	a := load(t, orig)
	b := load(t, rotated)
	for _, mode := range []string{"batch", "sequential"} {
		want, err := model.ComputeLogits(a, ids, mode)
		if err != nil {
			t.Fatal(err)
		}
		got, err := model.ComputeLogits(b, ids, mode)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(want.Logits, got.Logits); d > 1e-3 {
			t.Errorf("%s: rotated model's logits differ by %g", mode, d)
		}
	}
}

var rotations = []struct {
	name string
	rot  rotation
}{
	{"explicit signs", rotation{block: 64, seed: 1}},
	{"grouped ssm_out", rotation{block: 64, grouped: true, seed: 2}},
	{"identity signs", rotation{block: 32, identity: true}},
}

// TestRotatedReference folds random rotations into the float reference
// model: the logits must stay those of the original within 1e-3.
func TestRotatedReference(t *testing.T) {
	src := filepath.Join(testdata.Path(t, "reference"), "qwen35-f32.gguf")
	ids := []int{261, 367, 29, 476, 255, 53, 160, 115, 380, 480, 252, 389, 104, 255, 13, 221}
	for _, tc := range rotations {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "rotated.gguf")
			rotateFile(t, src, dst, tc.rot)
			checkRotated(t, src, dst, ids)
		})
	}
}

// TestRotatedSynthetic does the same on synthetic models, so it runs
// without the shared test data: qwen35, qwen3next (fused gates, grouped
// value heads) and a tied head (which reads the rotated embedding table).
func TestRotatedSynthetic(t *testing.T) {
	for _, arch := range []string{"qwen35", "qwen3next", "tied"} {
		for _, tc := range rotations {
			t.Run(arch+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				c := smallSynth()
				if arch == "tied" {
					c.tied = true
				} else {
					c.arch = arch
				}
				src := c.write(t, dir)
				dst := filepath.Join(dir, "rotated.gguf")
				rotateFile(t, src, dst, tc.rot)
				checkRotated(t, src, dst, tokens(70, c.vocab, 5))
			})
		}
	}
}

// TestRotationRefused writes declarations trit does not implement or that
// are malformed: each file must be refused at load with an error wrapping
// hadamard.ErrInvalid or hadamard.ErrWidth.
func TestRotationRefused(t *testing.T) {
	set := func(key string, v gguf.Value) func(*[]gguf.KV) {
		return func(k *[]gguf.KV) { setKV(k, "prism.hadamard."+key, v) }
	}
	del := func(key string) func(*[]gguf.KV) {
		return func(k *[]gguf.KV) { delKV(k, "prism.hadamard."+key) }
	}
	cases := []struct {
		name string
		edit func(*[]gguf.KV)
	}{
		{"version 2", set("version", gguf.Uint32(2))},
		{"version as string", set("version", gguf.String("1"))},
		{"block not a power of two", set("block_size", gguf.Uint32(48))},
		{"block zero", set("block_size", gguf.Uint32(0))},
		{"block wider than the widths", set("block_size", gguf.Uint32(256))},
		{"other transform", set("transform", gguf.String("normalized-dct"))},
		{"other axis", set("axis", gguf.String("output-first-dimension"))},
		{"unknown sign mode", set("sign_mode", gguf.String("seeded"))},
		{"missing transform", del("transform")},
		{"missing sign values", del("sign_values")},
		{"sign value 2", func(k *[]gguf.KV) {
			for i := range *k {
				if (*k)[i].Key == "prism.hadamard.sign_values" {
					v, _ := (*k)[i].Value.Ints()
					s := make([]int32, len(v))
					for j := range v {
						s[j] = int32(v[j])
					}
					s[5] = 2
					(*k)[i].Value = gguf.Array(s)
				}
			}
		}},
		{"sign values too short", func(k *[]gguf.KV) {
			for i := range *k {
				if (*k)[i].Key == "prism.hadamard.sign_values" {
					v, _ := (*k)[i].Value.Ints()
					s := make([]int32, len(v)-1)
					for j := range s {
						s[j] = int32(v[j])
					}
					(*k)[i].Value = gguf.Array(s)
				}
			}
		}},
		{"width not a multiple of the block", set("sign_widths", gguf.Array([]int32{64, 100}))},
		{"width missing for a rotated weight", func(k *[]gguf.KV) {
			setKV(k, "prism.hadamard.sign_widths", gguf.Array([]int32{64}))
			s := make([]int32, 64)
			for i := range s {
				s[i] = 1
			}
			setKV(k, "prism.hadamard.sign_values", gguf.Array(s))
		}},
		{"duplicate width", set("sign_widths", gguf.Array([]int32{64, 64}))},
		{"identity with signs", set("sign_mode", gguf.String("identity"))},
		{"unknown weight", set("weight_names", gguf.Array([]string{"blk.0.ffn_up.weight", "blk.9.ffn_up.weight"}))},
		{"convolution listed", set("weight_names", gguf.Array([]string{"blk.0.ssm_conv1d.weight"}))},
		{"embedding as an input weight", func(k *[]gguf.KV) {
			setKV(k, "prism.hadamard.weight_names", gguf.Array([]string{"token_embd.weight"}))
			delKV(k, "prism.hadamard.inverse_weight_names")
		}},
		{"inverse of the head", func(k *[]gguf.KV) {
			setKV(k, "prism.hadamard.weight_names", gguf.Array([]string{"blk.0.ffn_up.weight"}))
			setKV(k, "prism.hadamard.inverse_weight_names", gguf.Array([]string{"output.weight"}))
		}},
		{"weight in both lists", set("inverse_weight_names", gguf.Array([]string{"token_embd.weight", "output.weight"}))},
		{"weight names of numbers", set("weight_names", gguf.Array([]int32{1, 2}))},
		{"grouped as a number", set("gdn_v_grouped", gguf.Uint32(1))},
		{"unknown key", set("seed", gguf.Uint32(7))},
	}
	dir := t.TempDir()
	c := smallSynth()
	src := c.write(t, dir)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "bad.gguf")
			rotateFile(t, src, dst, rotation{block: 64, seed: 9, edit: tc.edit})
			m, err := model.Load(dst, model.Options{Threads: 1, CacheK: quant.F32, CacheV: quant.F32})
			if err == nil {
				m.Close()
				t.Fatal("loaded without error")
			}
			if !errors.Is(err, hadamard.ErrInvalid) && !errors.Is(err, hadamard.ErrWidth) {
				t.Errorf("error %q wraps neither ErrInvalid nor ErrWidth", err)
			}
		})
	}
}
