package inspect

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"trit/internal/testdata"

	"trit/gguf"
	"trit/quant"
)

func open(t *testing.T, path string) *Report {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return New(f)
}

func param(r *Report, key string) any {
	for _, p := range r.Hyperparameters {
		if p.Key == key {
			return p.Value
		}
	}
	return nil
}

func tensor(r *Report, name string) Tensor {
	for _, t := range r.Tensors {
		if t.Name == name {
			return t
		}
	}
	return Tensor{Shape: []int64{0, 0}}
}

func typeSum(r *Report, name string) TypeSum {
	for _, s := range r.Types {
		if s.Type == name {
			return s
		}
	}
	return TypeSum{}
}

// The qwen3-tern-* files (README: 3 layers, hidden 256, 4/2 heads of 64,
// ffn 512, 512-token vocabulary, tied embedding, --pure quantization) hold
// 22 matrices in the quantized type and 13 F32 norms:
// 7 matrices per layer of 32768+65536+65536+32768+3·131072 = 589824
// weights, plus the 256×512 embedding; norms 256 + 3·(2·64 + 2·256).
func TestReferenceQwen3Tern(t *testing.T) {
	dir := testdata.Path(t, "reference")
	const linear, embd, norms = 3 * 589824, 256 * 512, 256 + 3*(2*64+2*256)
	tests := []struct {
		file   string
		format *quant.Format
		warn   string
	}{
		{"qwen3-tern-Q2_0g128.gguf", quant.Q2_0, "22 tensors of type 42 read as Q2_0 (group 128)"},
		{"qwen3-tern-Q2_0.gguf", quant.Q2_0g64, "22 tensors of type 42 read as Q2_0_g64 (group 64)"},
		{"qwen3-tern-TQ1_0.gguf", quant.TQ1_0, ""},
		{"qwen3-tern-TQ2_0.gguf", quant.TQ2_0, ""},
		{"qwen3-tern-Q1_0.gguf", quant.Q1_0, ""},
		{"qwen3-tern-Q4_0.gguf", quant.Q4_0, ""},
		{"qwen3-tern-Q8_0.gguf", quant.Q8_0, ""},
		{"qwen3-tern-Q4_K.gguf", quant.Q4_K, ""},
		{"qwen3-tern-Q6_K.gguf", quant.Q6_K, ""},
		{"qwen3-tern-f32.gguf", quant.F32, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := open(t, filepath.Join(dir, tt.file))
			if r.Architecture != "qwen3" || param(r, "qwen3.block_count") != uint32(3) || param(r, "qwen3.embedding_length") != uint32(256) {
				t.Errorf("arch %q block_count %v embedding_length %v", r.Architecture, param(r, "qwen3.block_count"), param(r, "qwen3.embedding_length"))
			}
			if r.All.Tensors != 35 || r.All.Elements != linear+embd+norms {
				t.Errorf("all: %+v", r.All)
			}
			if r.Linear.Tensors != 21 || r.Linear.Elements != linear || r.Linear.Bits != tt.format.BitsPerWeight() {
				t.Errorf("linear: %+v, want %v bits", r.Linear, tt.format.BitsPerWeight())
			}
			if tern := r.Linear.Ternary == linear; tern != tt.format.Ternary {
				t.Errorf("linear ternary %d of %d", r.Linear.Ternary, linear)
			}
			if tt.format != quant.F32 {
				q, f := typeSum(r, tt.format.Name), typeSum(r, "F32")
				if len(r.Types) != 2 || q.Tensors != 22 || q.Elements != linear+embd || f.Tensors != 13 || f.Elements != norms {
					t.Errorf("types: %+v", r.Types)
				}
				if want := int64(linear+embd) / int64(tt.format.BlockElems) * int64(tt.format.BlockBytes); q.Bytes != want {
					t.Errorf("%s bytes %d, want %d", tt.format.Name, q.Bytes, want)
				}
			}
			if e := tensor(r, "token_embd.weight"); e.Type != tt.format.Name || e.Shape[0] != 256 || e.Shape[1] != 512 {
				t.Errorf("token_embd.weight: %+v", e)
			}
			if warned := strings.Join(r.Warnings, "\n"); (tt.warn == "") != (warned == "") || !strings.Contains(warned, tt.warn) {
				t.Errorf("warnings %q, want %q", warned, tt.warn)
			}
			tok := r.Tokenizer
			if tok == nil || tok.Model != "gpt2" || tok.Pre != "qwen2" || tok.Tokens != 512 || tok.Merges != 256 ||
				*tok.BOS != 0 || *tok.EOS != 1 || tok.PAD != nil || *tok.AddBOS || tok.ChatTemplate != 0 {
				t.Errorf("tokenizer %+v", tok)
			}
		})
	}
}

func TestReferenceOthers(t *testing.T) {
	dir := testdata.Path(t, "reference")
	// qwen3-f32: untied output.weight adds a 22nd linear tensor.
	r := open(t, filepath.Join(dir, "qwen3-f32.gguf"))
	if r.Linear.Tensors != 22 || r.Linear.Elements != 3*589824+256*512 || r.Linear.Bits != 32 || r.Linear.Ternary != 0 {
		t.Errorf("qwen3-f32 linear %+v", r.Linear)
	}
	if r.FileType == nil || *r.FileType != 0 || r.FileTypeName != "ALL_F32" {
		t.Errorf("file type %v %q", r.FileType, r.FileTypeName)
	}
	r = open(t, filepath.Join(dir, "qwen3-yarn-f32.gguf"))
	if param(r, "qwen3.rope.scaling.type") != "yarn" || param(r, "qwen3.rope.scaling.factor") != float32(4) ||
		param(r, "qwen3.rope.scaling.original_context_length") != uint32(64) {
		t.Errorf("yarn keys: %+v", r.Hyperparameters)
	}
	// qwen35-tern-mix-TQ2_0: token_embd Q4_K, output Q6_K, matrices TQ2_0.
	r = open(t, filepath.Join(dir, "qwen35-tern-mix-TQ2_0.gguf"))
	if r.Architecture != "qwen35" || param(r, "qwen35.block_count") != uint32(8) || param(r, "qwen35.ssm.conv_kernel") != uint32(4) {
		t.Errorf("qwen35 keys: %+v", r.Hyperparameters)
	}
	if s := param(r, "qwen35.rope.dimension_sections"); s == nil || len(s.([]int64)) != 4 {
		t.Errorf("dimension_sections %v", s)
	}
	if typeSum(r, "Q4_K").Tensors != 1 || typeSum(r, "Q6_K").Tensors != 1 || typeSum(r, "TQ2_0").Tensors == 0 {
		t.Errorf("mix types %+v", r.Types)
	}
	if r.Linear.TernaryFraction < 0.9 || r.Linear.TernaryFraction >= 1 {
		t.Errorf("mix ternary fraction %v", r.Linear.TernaryFraction)
	}
}

// fixture writes a small file exercising every part of the report.
func fixture(t *testing.T) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	add := func(k string, v gguf.Value) {
		if err := w.AddKV(k, v); err != nil {
			t.Fatal(err)
		}
	}
	add("general.architecture", gguf.String("qwen35"))
	add("general.name", gguf.String("fixture"))
	add("general.file_type", gguf.Uint32(141))
	add("qwen35.block_count", gguf.Uint32(1))
	add("qwen35.rope.freq_base", gguf.Float32(float32(math.NaN())))
	add("qwen35.rope.dimension_sections", gguf.Array([]uint8{11, 11, 10, 0}))
	add("foo.bar", gguf.Bool(true))
	add("tokenizer.ggml.model", gguf.String("gpt2"))
	add("tokenizer.ggml.tokens", gguf.Array([]string{"a", "b", "c"}))
	add("tokenizer.ggml.padding_token_id", gguf.Uint32(999))
	add("tokenizer.chat_template", gguf.String("{{x}}"))
	h := "prism.hadamard."
	add(h+"version", gguf.Uint32(1))
	add(h+"block_size", gguf.Uint32(128))
	add(h+"transform", gguf.String("normalized-sylvester-walsh-hadamard"))
	add(h+"axis", gguf.String("input-last-dimension"))
	add(h+"sign_mode", gguf.String("explicit"))
	add(h+"sign_widths", gguf.Array([]int32{128}))
	add(h+"sign_values", gguf.Array(make([]int8, 100)))
	add(h+"weight_names", gguf.Array([]string{"blk.0.ffn_up.weight", "blk.9.ffn_up.weight"}))
	add(h+"inverse_weight_names", gguf.Array([]string{"token_embd.weight"}))
	add(h+"gdn_v_grouped", gguf.Bool(true))
	q := quant.Q2_0g64
	for _, name := range []string{"token_embd.weight", "blk.0.ffn_up.weight"} {
		if err := w.AddTensor(name, q, []int64{128, 32}, make([]byte, 32*2*18)); err != nil {
			t.Fatal(err)
		}
	}
	w.AddTensor("output_norm.weight", quant.F32, []int64{128}, make([]byte, 512))
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFixture(t *testing.T) {
	r := New(fixture(t))
	if r.Name != "fixture" || r.FileTypeName != "MOSTLY_PQ2_0" || len(r.Hyperparameters) != 3 {
		t.Errorf("header: %q %q %+v", r.Name, r.FileTypeName, r.Hyperparameters)
	}
	if r.Linear.Tensors != 1 || r.Linear.Elements != 128*32 || r.Linear.Bits != 2.25 || r.Linear.TernaryFraction != 1 {
		t.Errorf("linear %+v", r.Linear)
	}
	if r.All.Tensors != 3 || r.All.Elements != 2*128*32+128 {
		t.Errorf("all %+v", r.All)
	}
	if tok := r.Tokenizer; tok.Tokens != 3 || *tok.PAD != 999 || tok.ChatTemplate != 5 || tok.BOS != nil {
		t.Errorf("tokenizer %+v", tok)
	}
	h := r.Hadamard
	if h == nil || h.Version != 1 || h.BlockSize != 128 || h.SignMode != "explicit" || len(h.SignWidths) != 1 ||
		h.SignValues != 100 || h.WeightNames != 2 || h.MissingWeight != 1 || len(h.InverseNames) != 1 || !*h.GDNVGrouped {
		t.Errorf("hadamard %+v", h)
	}
	for _, want := range []string{
		"1 unknown keys: foo.bar",
		"special token id 999 is outside the vocabulary of 3",
		"2 tensors of type 42 read as Q2_0_g64 (group 64)",
		"1 of 2 prism.hadamard.weight_names are not tensors of this file",
		"sign_values has 100 entries, sign_widths sum to 128",
	} {
		if !strings.Contains(strings.Join(r.Warnings, "\n"), want) {
			t.Errorf("no warning %q in %q", want, r.Warnings)
		}
	}

	// JSON: NaN becomes text, uint8 arrays stay numbers.
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Hyperparameters []Param  `json:"hyperparameters"`
		Hadamard        Hadamard `json:"hadamard"`
		Linear          Weights  `json:"linear"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hyperparameters[1].Value != "NaN" || back.Hadamard.BlockSize != 128 || back.Linear.Bits != 2.25 {
		t.Errorf("JSON round trip: %s", js)
	}
	if secs, ok := back.Hyperparameters[2].Value.([]any); !ok || len(secs) != 4 || secs[0] != 11.0 {
		t.Errorf("dimension_sections in JSON: %#v", back.Hyperparameters[2].Value)
	}

	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	norm := strings.Join(strings.Fields(text.String()), " ")
	for _, want := range []string{
		"architecture qwen35",
		"file type 141 MOSTLY_PQ2_0",
		"linear layers 4,096 in 1 tensors, 2.2500 bits/weight, 100.0% ternary",
		"qwen35.rope.freq_base float32 NaN",
		"chat template 5 bytes",
		"special ids bos -, eos -, pad 999, unk -",
		"block size 128",
		"inverse weights token_embd.weight",
		"Q2_0_g64 2 8,192 2,304 2.2500",
		"blk.0.ffn_up.weight Q2_0_g64 [128, 32] 1,152",
		"warnings",
	} {
		if !strings.Contains(norm, want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestEmpty(t *testing.T) {
	var b bytes.Buffer
	gguf.NewWriter().WriteTo(&b)
	f, err := gguf.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	r := New(f)
	if r.Tokenizer != nil || r.Hadamard != nil || len(r.Warnings) != 1 || r.All.Bits != 0 {
		t.Errorf("empty report %+v", r)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "general.architecture is missing") {
		t.Errorf("text %q, %v", text.String(), err)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 123456: "123,456"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
