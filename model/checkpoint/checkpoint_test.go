package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trit/half"
	"trit/quant"
	"trit/safetensors"
)

// module is an MLX quantized module written by the test: codes, and per
// group a scale and a bias (fp16), from which the test computes the values
// the source must give.
type module struct {
	path       string
	rows, cols int
	group      int
	bits       int
	codes      []uint32
	s, b       []uint16
}

func newModule(rng *rand.Rand, path string, rows, cols, group, bits int, ternary bool) *module {
	m := &module{path: path, rows: rows, cols: cols, group: group, bits: bits}
	n := rows * cols
	m.codes = make([]uint32, n)
	hi := uint32(1) << bits
	for i := range m.codes {
		m.codes[i] = rng.Uint32N(hi)
		if ternary && bits == 2 {
			m.codes[i] = rng.Uint32N(3)
		}
	}
	g := n / group
	m.s, m.b = make([]uint16, g), make([]uint16, g)
	for i := range g {
		s := float32(rng.IntN(2000)+1) / 4096
		m.s[i] = half.FromFloat32(s)
		m.b[i] = half.FromFloat32(-0.3 * s)
		if ternary {
			if bits == 1 {
				m.s[i] = half.FromFloat32(2 * s)
			}
			m.b[i] = half.FromFloat32(-s)
		}
	}
	return m
}

// value is element i as MLX computes it: s·q + b.
func (m *module) value(i int) float32 {
	g := i / m.group
	return half.ToFloat32(m.s[g])*float32(m.codes[i]) + half.ToFloat32(m.b[g])
}

func (m *module) add(t *testing.T, w *safetensors.Writer) {
	per := 32 / m.bits
	words := make([]byte, 4*len(m.codes)/per)
	for i, c := range m.codes {
		o := 4 * (i / per)
		binary.LittleEndian.PutUint32(words[o:], binary.LittleEndian.Uint32(words[o:])|c<<(m.bits*(i%per)))
	}
	f16 := func(v []uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		return b
	}
	gs := int64(m.cols / m.group)
	for _, e := range []struct {
		name  string
		dt    safetensors.DType
		shape []int64
		data  []byte
	}{
		{".weight", safetensors.U32, []int64{int64(m.rows), int64(m.cols / per)}, words},
		{".scales", safetensors.F16, []int64{int64(m.rows), gs}, f16(m.s)},
		{".biases", safetensors.F16, []int64{int64(m.rows), gs}, f16(m.b)},
	} {
		if err := w.Add(m.path+e.name, e.dt, e.shape, e.data); err != nil {
			t.Fatal(err)
		}
	}
}

func writePack(t *testing.T, dir string, cfg map[string]any, mods []*module, extra func(*safetensors.Writer)) {
	t.Helper()
	w := safetensors.NewWriter()
	for _, m := range mods {
		m.add(t, w)
	}
	if extra != nil {
		extra(w)
	}
	if err := w.WriteFile(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func qwen3Config() map[string]any {
	return map[string]any{
		"model_type": "qwen3", "hidden_size": 256, "num_hidden_layers": 1, "intermediate_size": 512,
		"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "rms_norm_eps": 1e-6,
		"rope_theta": 1e6, "max_position_embeddings": 4096,
		"quantization": map[string]any{
			"group_size": 32, "bits": 4, "mode": "affine",
			"model.layers.0.mlp.down_proj":    map[string]any{"group_size": 64, "bits": 8},
			"model.layers.0.self_attn.q_proj": map[string]any{"group_size": 128, "bits": 2},
			"model.layers.0.self_attn.k_proj": map[string]any{"group_size": 128, "bits": 2},
			"model.layers.0.self_attn.v_proj": map[string]any{"group_size": 128, "bits": 1},
			"model.embed_tokens":              map[string]any{"group_size": 64, "bits": 2},
			"model.layers.0.mlp.gate_proj":    map[string]any{"group_size": 128, "bits": 2},
		},
	}
}

// TestMLXModules checks every kind of MLX module against s·q + b computed
// here: ternary and binary ones come out in the packed GGUF layouts,
// affine 4- and 8-bit ones (and a 2-bit one with code 3) as float32;
// tensors outside the text model are never read.
func TestMLXModules(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mods := []*module{
		newModule(rng, "model.layers.0.mlp.up_proj", 512, 256, 32, 4, false),
		newModule(rng, "model.layers.0.mlp.down_proj", 256, 512, 64, 8, false),
		newModule(rng, "model.layers.0.self_attn.q_proj", 256, 256, 128, 2, true),
		newModule(rng, "model.layers.0.self_attn.k_proj", 128, 256, 128, 2, false),
		newModule(rng, "model.layers.0.self_attn.v_proj", 128, 256, 128, 1, true),
		newModule(rng, "model.embed_tokens", 64, 256, 64, 2, true),
		newModule(rng, "model.layers.0.mlp.gate_proj", 512, 256, 128, 2, false),
	}
	mods[3].codes[5] = 3 // not ternary: the generic path
	for i := range mods[3].b {
		mods[3].b[i] = mods[3].s[i] ^ 0x8000
	}
	dir := t.TempDir()
	writePack(t, dir, qwen3Config(), mods, func(w *safetensors.Writer) {
		// A vision tensor of a dtype the text loader refuses: never read.
		w.Add("model.visual.patch_embed.proj.weight", safetensors.I64, []int64{2}, make([]byte, 16))
		w.Add("model.norm.weight", safetensors.BF16, []int64{256}, make([]byte, 512))
	})
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want := map[string]*quant.Format{
		"blk.0.ffn_up.weight": quant.F32, "blk.0.ffn_down.weight": quant.F32, "blk.0.attn_q.weight": quant.PQ2_0,
		"blk.0.attn_k.weight": quant.F32, "blk.0.attn_v.weight": quant.Q1_0, "token_embd.weight": quant.Q2_0g64,
		"blk.0.ffn_gate.weight": quant.F32,
	}
	for i, m := range mods {
		name := []string{"blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight", "token_embd.weight", "blk.0.ffn_gate.weight"}[i]
		tn := src.Tensor(name)
		if tn == nil {
			t.Fatalf("%s missing", name)
		}
		if tn.Format != want[name] || tn.Dims[0] != int64(m.cols) || tn.Dims[1] != int64(m.rows) {
			t.Errorf("%s: %s %v, want %s [%d %d]", name, tn.Format, tn.Dims, want[name], m.cols, m.rows)
		}
		v, err := tn.Floats()
		if err != nil {
			t.Fatal(err)
		}
		for j := range v {
			if v[j] != m.value(j) {
				t.Fatalf("%s[%d] = %g, want %g", name, j, v[j], m.value(j))
			}
		}
	}
	if n := src.Tensor("output_norm.weight"); n == nil || n.Format != quant.BF16 {
		t.Errorf("output_norm: %v", n)
	}
	if src.Layout().Container != "MLX pack" {
		t.Errorf("container %q", src.Layout().Container)
	}
	if a, ok := src.Meta().String("general.architecture"); !ok || a != "qwen3" {
		t.Errorf("architecture %q", a)
	}
	if v, _ := src.Meta().Uint("qwen3.attention.key_length"); v != 64 {
		t.Errorf("key_length %d", v)
	}
}

// TestOpenErrors checks that bad packs are refused with a clear error.
func TestOpenErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ok := func() []*module {
		return []*module{newModule(rng, "model.layers.0.mlp.up_proj", 64, 256, 32, 4, false)}
	}
	cases := []struct {
		name string
		cfg  func(map[string]any)
		mods func() []*module
		want string
	}{
		{"model type", func(c map[string]any) { c["model_type"] = "gpt_neox" }, ok, "model_type"},
		{"mode", func(c map[string]any) { c["quantization"].(map[string]any)["mode"] = "mxfp4" }, ok, "mxfp4"},
		{"bits", func(c map[string]any) { c["quantization"].(map[string]any)["bits"] = 3 }, ok, "3-bit"},
		{"group", func(c map[string]any) { c["quantization"].(map[string]any)["group_size"] = 48 }, ok, "group size"},
		{"hidden", func(c map[string]any) { delete(c, "hidden_size") }, ok, "hidden_size"},
		{"heads", func(c map[string]any) { c["num_attention_heads"] = -1 }, ok, "num_attention_heads"},
		{"shape", nil, func() []*module {
			// Scales for groups of 64 where the config says 32.
			return []*module{newModule(rng, "model.layers.0.mlp.up_proj", 64, 256, 64, 4, false)}
		}, "scales"},
		{"no quantization", func(c map[string]any) { delete(c, "quantization") }, ok, "no quantization"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := qwen3Config()
			if c.cfg != nil {
				c.cfg(cfg)
			}
			writePack(t, dir, cfg, c.mods(), nil)
			src, err := Open(dir)
			if err == nil {
				src.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrConfig) {
		t.Errorf("empty folder: %v", err)
	}
}

func TestNameMap(t *testing.T) {
	cases := []struct{ hf, arch, gguf string }{
		{"model.embed_tokens.weight", "qwen3", "token_embd.weight"},
		{"lm_head.weight", "qwen3", "output.weight"},
		{"language_model.lm_head.weight", "qwen35", "output.weight"},
		{"model.layers.3.post_attention_layernorm.weight", "qwen3", "blk.3.ffn_norm.weight"},
		{"language_model.model.layers.3.post_attention_layernorm.weight", "qwen35", "blk.3.post_attention_norm.weight"},
		{"model.language_model.layers.12.linear_attn.A_log", "qwen35", "blk.12.ssm_a"},
		{"language_model.model.layers.0.linear_attn.in_proj_qkv.weight", "qwen35", "blk.0.attn_qkv.weight"},
	}
	for _, c := range cases {
		g, ok := ggufName(c.hf, family(c.arch))
		if !ok || g != c.gguf {
			t.Errorf("ggufName(%s) = %s, %v; want %s", c.hf, g, ok, c.gguf)
		}
		back, ok := HFName(g, c.arch)
		if g2, _ := ggufName(back, family(c.arch)); !ok || g2 != g {
			t.Errorf("HFName(%s) = %s, which maps to %s", g, back, g2)
		}
	}
	for _, bad := range []string{"model.visual.blocks.0.attn.qkv.weight", "model.layers.x.mlp.up_proj.weight", "model.layers.01.mlp.up_proj.weight", "mtp.fc.weight"} {
		if g, ok := ggufName(bad, "5"); ok {
			t.Errorf("ggufName(%s) = %s", bad, g)
		}
	}
}

// TestALog checks that A_log round-trips exactly: in float32 where one
// exists (always for |A_log| < 1), in float64 always.
func TestALog(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		a := -float32(math.Exp(2 * rng.NormFloat64()))
		x, ok := ALog(a)
		if ok != (SSMA(x) == a) || (!ok && math.Abs(float64(x)) < 1) {
			t.Fatalf("ALog(%g) = %g, %v: SSMA gives %g", a, x, ok, SSMA(x))
		}
		if SSMA64(math.Log(-float64(a))) != a {
			t.Fatalf("float64 A_log of %g does not round-trip", a)
		}
	}
	if _, ok := ALog(1); ok {
		t.Error("ALog of a positive value")
	}
}
