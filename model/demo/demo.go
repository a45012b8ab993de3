// Package demo builds trit's built-in demo model: a small model of the real
// qwen3 architecture with random ternary weights and a byte-level
// tokenizer, made deterministically in memory. Its output is meaningless;
// it exists so that every part of trit can run on a fresh clone, offline.
package demo

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"trit/gguf"
	"trit/quant"
	"trit/tokenizer"
)

// Shape of the demo model: Qwen3 with small sizes.
const (
	hidden  = 256
	layers  = 4
	heads   = 4
	kvHeads = 2
	headDim = 64
	ffn     = 768
)

// Special tokens after the 256 byte tokens, as in Qwen vocabularies.
var specials = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}

// File returns the demo model as an open GGUF file held in memory.
func File() (*gguf.File, error) {
	b, err := Bytes()
	if err != nil {
		return nil, err
	}
	return gguf.NewReader(bytes.NewReader(b), int64(len(b)))
}

// Bytes returns the demo model's GGUF encoding. The same bytes every time.
func Bytes() ([]byte, error) {
	w := gguf.NewWriter()
	rng := rand.New(rand.NewPCG(1, 2))
	tokens := make([]string, 0, 256+len(specials))
	types := make([]int32, 0, cap(tokens))
	for b := range 256 {
		tokens = append(tokens, tokenizer.ByteToken(byte(b)))
		types = append(types, tokenizer.TypeNormal)
	}
	for _, s := range specials {
		tokens = append(tokens, s)
		types = append(types, tokenizer.TypeControl)
	}
	vocab := len(tokens)
	kv := []struct {
		k string
		v gguf.Value
	}{
		{"general.architecture", gguf.String("qwen3")},
		{"general.name", gguf.String("trit demo (random ternary weights)")},
		{"qwen3.context_length", gguf.Uint32(4096)},
		{"qwen3.embedding_length", gguf.Uint32(hidden)},
		{"qwen3.block_count", gguf.Uint32(layers)},
		{"qwen3.feed_forward_length", gguf.Uint32(ffn)},
		{"qwen3.attention.head_count", gguf.Uint32(heads)},
		{"qwen3.attention.head_count_kv", gguf.Uint32(kvHeads)},
		{"qwen3.attention.key_length", gguf.Uint32(headDim)},
		{"qwen3.attention.value_length", gguf.Uint32(headDim)},
		{"qwen3.attention.layer_norm_rms_epsilon", gguf.Float32(1e-6)},
		{"qwen3.rope.freq_base", gguf.Float32(1e6)},
		{"tokenizer.ggml.model", gguf.String("gpt2")},
		{"tokenizer.ggml.pre", gguf.String("qwen2")},
		{"tokenizer.ggml.tokens", gguf.Array(tokens)},
		{"tokenizer.ggml.token_type", gguf.Array(types)},
		{"tokenizer.ggml.merges", gguf.Array([]string{})},
		{"tokenizer.ggml.eos_token_id", gguf.Uint32(uint32(256 + 2))},
		{"tokenizer.ggml.padding_token_id", gguf.Uint32(256)},
		{"tokenizer.ggml.add_bos_token", gguf.Bool(false)},
	}
	for _, e := range kv {
		if err := w.AddKV(e.k, e.v); err != nil {
			return nil, err
		}
	}
	add := func(name string, f *quant.Format, vals []float32, dims ...int64) error {
		n := int64(len(vals))
		size, err := f.RowBytes(n)
		if err != nil {
			return fmt.Errorf("demo: %s: %w", name, err)
		}
		data := make([]byte, size)
		if err := f.Encode(data, vals); err != nil {
			return fmt.Errorf("demo: %s: %w", name, err)
		}
		return w.AddTensor(name, f, dims, data)
	}
	// ternary returns in×out weights in {-s, 0, +s}, s = 1/√(in·2/3), so
	// that activations keep their scale through the layers.
	ternary := func(in, out int) []float32 {
		s := float32(1 / math.Sqrt(float64(in)*2/3))
		v := make([]float32, in*out)
		for i := range v {
			v[i] = float32(rng.IntN(3)-1) * s
		}
		return v
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	if err := add("token_embd.weight", quant.Q2_0, ternary(hidden, vocab), hidden, int64(vocab)); err != nil {
		return nil, err
	}
	if err := add("output_norm.weight", quant.F32, ones(hidden), hidden); err != nil {
		return nil, err
	}
	// An untied head whose rows for bytes other than printable ASCII and
	// newline are zero, and the others large: the random text stays
	// readable instead of a stream of invalid UTF-8.
	head := ternary(hidden, vocab)
	for tok := range vocab {
		k := float32(4)
		if tok >= 256 || (tok != '\n' && (tok < ' ' || tok > '~')) {
			k = 0
		}
		for i := range hidden {
			head[tok*hidden+i] *= k
		}
	}
	if err := add("output.weight", quant.Q2_0, head, hidden, int64(vocab)); err != nil {
		return nil, err
	}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		for _, t := range []struct {
			name    string
			in, out int
		}{
			{"attn_q.weight", hidden, heads * headDim},
			{"attn_k.weight", hidden, kvHeads * headDim},
			{"attn_v.weight", hidden, kvHeads * headDim},
			{"attn_output.weight", heads * headDim, hidden},
			{"ffn_gate.weight", hidden, ffn},
			{"ffn_up.weight", hidden, ffn},
			{"ffn_down.weight", ffn, hidden},
		} {
			if err := add(p+t.name, quant.Q2_0, ternary(t.in, t.out), int64(t.in), int64(t.out)); err != nil {
				return nil, err
			}
		}
		for _, t := range []struct {
			name string
			n    int
		}{{"attn_norm.weight", hidden}, {"ffn_norm.weight", hidden}, {"attn_q_norm.weight", headDim}, {"attn_k_norm.weight", headDim}} {
			if err := add(p+t.name, quant.F32, ones(t.n), int64(t.n)); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
