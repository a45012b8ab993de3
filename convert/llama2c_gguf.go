package convert

import (
	"encoding/binary"
	"fmt"
	"math"

	"trit/gguf"
	"trit/quant"
	"trit/tokenizer"
)

// Llama2CGGUF returns a GGUF writer holding the checkpoint m and the
// vocabulary v as a "llama" architecture model with F32 tensors. llama2.c
// rotates adjacent pairs in RoPE, which is what llama.cpp and trit do for
// the llama architecture, so the weights are stored as they are.
func Llama2CGGUF(m *Llama2C, v *tokenizer.Vocab) (*gguf.Writer, error) {
	c := m.Config
	if len(v.Tokens) != c.Vocab {
		return nil, fmt.Errorf("convert: the tokenizer has %d tokens, the checkpoint %d", len(v.Tokens), c.Vocab)
	}
	w := gguf.NewWriter()
	types := v.Types
	if types == nil {
		types = make([]int32, len(v.Tokens))
		for i := range types {
			types[i] = tokenizer.TypeNormal
		}
	}
	scores := v.Scores
	if scores == nil {
		scores = make([]float32, len(v.Tokens))
	}
	kvs := []struct {
		k string
		v gguf.Value
	}{
		{"general.architecture", gguf.String("llama")},
		{"general.name", gguf.String("llama2.c checkpoint")},
		{"llama.context_length", gguf.Uint32(uint32(c.SeqLen))},
		{"llama.embedding_length", gguf.Uint32(uint32(c.Dim))},
		{"llama.block_count", gguf.Uint32(uint32(c.Layers))},
		{"llama.feed_forward_length", gguf.Uint32(uint32(c.Hidden))},
		{"llama.attention.head_count", gguf.Uint32(uint32(c.Heads))},
		{"llama.attention.head_count_kv", gguf.Uint32(uint32(c.KVHeads))},
		{"llama.rope.dimension_count", gguf.Uint32(uint32(c.Dim / c.Heads))},
		{"llama.rope.freq_base", gguf.Float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", gguf.Float32(1e-5)},
		{"tokenizer.ggml.model", gguf.String("llama")},
		{"tokenizer.ggml.tokens", gguf.Array(v.Tokens)},
		{"tokenizer.ggml.scores", gguf.Array(scores)},
		{"tokenizer.ggml.token_type", gguf.Array(types)},
		{"tokenizer.ggml.add_bos_token", gguf.Bool(v.AddBOS)},
		{"tokenizer.ggml.add_space_prefix", gguf.Bool(v.AddSpacePrefix)},
	}
	for _, kv := range kvs {
		if err := w.AddKV(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	ids := []struct {
		key string
		id  int
	}{{"tokenizer.ggml.unknown_token_id", v.UNK}, {"tokenizer.ggml.bos_token_id", v.BOS}, {"tokenizer.ggml.eos_token_id", v.EOS},
		// llama2.c's run.c ends a story when the model emits BOS: the
		// stories models separate texts with it.
		{"tokenizer.ggml.eot_token_id", v.BOS}}
	for _, e := range ids {
		if e.id >= 0 {
			if err := w.AddKV(e.key, gguf.Uint32(uint32(e.id))); err != nil {
				return nil, err
			}
		}
	}
	D, F := int64(c.Dim), int64(c.Hidden)
	kvDim := int64(c.KVHeads * (c.Dim / c.Heads))
	add := func(name string, vals []float32, dims ...int64) error {
		b := make([]byte, 4*len(vals))
		for i, x := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return w.AddTensor(name, quant.F32, dims, b)
	}
	layer := func(all []float32, l int, n int64) []float32 { return all[int64(l)*n : int64(l+1)*n] }
	if err := add("token_embd.weight", m.Embed, D, int64(c.Vocab)); err != nil {
		return nil, err
	}
	if err := add("output_norm.weight", m.FinalNorm, D); err != nil {
		return nil, err
	}
	if m.Output != nil {
		if err := add("output.weight", m.Output, D, int64(c.Vocab)); err != nil {
			return nil, err
		}
	}
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		for _, t := range []struct {
			name string
			src  []float32
			dims []int64
		}{
			{"attn_norm.weight", m.AttnNorm, []int64{D}},
			{"attn_q.weight", m.WQ, []int64{D, D}},
			{"attn_k.weight", m.WK, []int64{D, kvDim}},
			{"attn_v.weight", m.WV, []int64{D, kvDim}},
			{"attn_output.weight", m.WO, []int64{D, D}},
			{"ffn_norm.weight", m.FFNNorm, []int64{D}},
			{"ffn_gate.weight", m.W1, []int64{D, F}},
			{"ffn_down.weight", m.W2, []int64{F, D}},
			{"ffn_up.weight", m.W3, []int64{D, F}},
		} {
			n := int64(1)
			for _, d := range t.dims {
				n *= d
			}
			if err := add(p+t.name, layer(t.src, l, n), t.dims...); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}
