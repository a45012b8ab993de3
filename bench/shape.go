// Package bench measures trit's speed and memory the way llama-bench does:
// prompt processing (pp) and token generation (tg) in tokens per second,
// mean ± standard deviation over repetitions, on real files or on synthetic
// models that have the exact architecture and tensor shapes of the Ternary
// Bonsai models but random ternary weights.
//
// Synthetic models exist because speed depends on shapes and formats, not
// on weight values: a file written by WriteSynthetic runs through the same
// loader, memory map and kernels as the real model, and other runtimes can
// be measured on the very same bytes.
package bench

import (
	"fmt"
	"strings"
)

// Shape is a model architecture with its sizes: everything that decides
// the tensor list and the tensor shapes of a GGUF file.
type Shape struct {
	Name string // e.g. "bonsai-1.7b"
	// Arch is the GGUF general.architecture: "qwen3" (dense) or "qwen35"
	// (Gated DeltaNet hybrid).
	Arch string

	Hidden, Layers, FFN, Vocab int
	// Attention: query heads, key/value heads and the head width.
	Heads, KVHeads, HeadDim int
	// Tied shapes have no output.weight: the head reuses token_embd.
	Tied       bool
	ContextLen int
	RopeBase   float64
	// RopeDims is the rotary width (0: the whole head).
	RopeDims int

	// The qwen35 fields; zero in dense shapes. Every FullAttnInterval-th
	// layer (i%FullAttnInterval == FullAttnInterval-1) is full attention,
	// the others Gated DeltaNet with SSMKeyHeads key heads and SSMValueHeads
	// value heads of SSMHeadDim, and a causal convolution of SSMConv taps.
	FullAttnInterval                       int
	SSMKeyHeads, SSMValueHeads, SSMHeadDim int
	SSMConv                                int
	// RopeSections is qwen35's rope.dimension_sections (mRoPE).
	RopeSections [4]int32
}

// Shapes are the model shapes trit bench knows: the Ternary Bonsai models
// (qwen3 dense v1 1.7B/4B/8B; qwen35 hybrid 2-9B and 27B) and two tiny
// shapes for tests. Sizes follow docs/qwen35-architecture.md §1 and §10;
// the dense vocabularies use the padded 151936 rows of base Qwen3, as the
// llama.cpp comparison files of docs/peers.md do.
var Shapes = []*Shape{
	{Name: "bonsai-1.7b", Arch: "qwen3", Hidden: 2048, Layers: 28, FFN: 6144, Vocab: 151936,
		Heads: 16, KVHeads: 8, HeadDim: 128, Tied: true, ContextLen: 32768, RopeBase: 1e6},
	{Name: "bonsai-4b", Arch: "qwen3", Hidden: 2560, Layers: 36, FFN: 9728, Vocab: 151936,
		Heads: 32, KVHeads: 8, HeadDim: 128, Tied: true, ContextLen: 32768, RopeBase: 1e6},
	{Name: "bonsai-8b", Arch: "qwen3", Hidden: 4096, Layers: 36, FFN: 12288, Vocab: 151936,
		Heads: 32, KVHeads: 8, HeadDim: 128, ContextLen: 65536, RopeBase: 1e6},
	{Name: "bonsai2-9b", Arch: "qwen35", Hidden: 4096, Layers: 32, FFN: 12288, Vocab: 248320,
		Heads: 16, KVHeads: 4, HeadDim: 256, ContextLen: 262144, RopeBase: 1e7, RopeDims: 64,
		FullAttnInterval: 4, SSMKeyHeads: 16, SSMValueHeads: 32, SSMHeadDim: 128, SSMConv: 4,
		RopeSections: [4]int32{11, 11, 10, 0}},
	{Name: "bonsai-27b", Arch: "qwen35", Hidden: 5120, Layers: 64, FFN: 17408, Vocab: 248320,
		Heads: 24, KVHeads: 4, HeadDim: 256, ContextLen: 262144, RopeBase: 1e7, RopeDims: 64,
		FullAttnInterval: 4, SSMKeyHeads: 16, SSMValueHeads: 48, SSMHeadDim: 128, SSMConv: 4,
		RopeSections: [4]int32{11, 11, 10, 0}},
	{Name: "tiny", Arch: "qwen3", Hidden: 256, Layers: 2, FFN: 512, Vocab: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, Tied: true, ContextLen: 4096, RopeBase: 1e6},
	{Name: "tiny-qwen35", Arch: "qwen35", Hidden: 256, Layers: 4, FFN: 512, Vocab: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, ContextLen: 4096, RopeBase: 1e7, RopeDims: 16,
		FullAttnInterval: 4, SSMKeyHeads: 2, SSMValueHeads: 4, SSMHeadDim: 64, SSMConv: 4,
		RopeSections: [4]int32{4, 2, 2, 0}},
}

// ShapeByName returns the shape with the given name (case-insensitive),
// or nil.
func ShapeByName(name string) *Shape {
	for _, s := range Shapes {
		if strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}

// ShapeNames lists the names of Shapes, in table order.
func ShapeNames() []string {
	names := make([]string, len(Shapes))
	for i, s := range Shapes {
		names[i] = s.Name
	}
	return names
}

// FullAttention reports whether layer i is a full-attention layer (every
// layer of a dense shape).
func (s *Shape) FullAttention(i int) bool {
	return s.FullAttnInterval <= 0 || i%s.FullAttnInterval == s.FullAttnInterval-1
}

// Role says which of the three type slots of a Types a tensor takes.
type Role int

// The tensor roles.
const (
	RoleWeight Role = iota // a layer's matrix
	RoleEmbd               // token_embd.weight
	RoleHead               // output.weight
	RoleFloat              // norms, gates, convolution: always F32
)

// TensorSpec is one tensor of a shape: its GGUF name and dims (ne, fastest
// first) and which type slot it takes.
type TensorSpec struct {
	Name string
	Dims []int64
	Role Role
}

// Elems is the number of elements.
func (t TensorSpec) Elems() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Tensors lists the shape's tensors in the order llama.cpp's converter
// writes them (global tensors, then block by block), with the names of
// docs/qwen35-architecture.md §9.3 and §9.5.
func (s *Shape) Tensors() []TensorSpec {
	h := int64(s.Hidden)
	var ts []TensorSpec
	add := func(name string, role Role, dims ...int64) {
		ts = append(ts, TensorSpec{Name: name, Dims: dims, Role: role})
	}
	add("token_embd.weight", RoleEmbd, h, int64(s.Vocab))
	add("output_norm.weight", RoleFloat, h)
	if !s.Tied {
		add("output.weight", RoleHead, h, int64(s.Vocab))
	}
	q := int64(s.Heads * s.HeadDim)
	kv := int64(s.KVHeads * s.HeadDim)
	hd := int64(s.HeadDim)
	for i := range s.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		add(p+"attn_norm.weight", RoleFloat, h)
		switch {
		case s.Arch != "qwen35":
			add(p+"attn_q.weight", RoleWeight, h, q)
			add(p+"attn_k.weight", RoleWeight, h, kv)
			add(p+"attn_v.weight", RoleWeight, h, kv)
			add(p+"attn_output.weight", RoleWeight, q, h)
			add(p+"attn_q_norm.weight", RoleFloat, hd)
			add(p+"attn_k_norm.weight", RoleFloat, hd)
			add(p+"ffn_norm.weight", RoleFloat, h)
		case s.FullAttention(i):
			add(p+"attn_q.weight", RoleWeight, h, 2*q) // query and gate, per head
			add(p+"attn_k.weight", RoleWeight, h, kv)
			add(p+"attn_v.weight", RoleWeight, h, kv)
			add(p+"attn_output.weight", RoleWeight, q, h)
			add(p+"attn_q_norm.weight", RoleFloat, hd)
			add(p+"attn_k_norm.weight", RoleFloat, hd)
			add(p+"post_attention_norm.weight", RoleFloat, h)
		default:
			kd := int64(s.SSMKeyHeads * s.SSMHeadDim)
			vd := int64(s.SSMValueHeads * s.SSMHeadDim)
			hv := int64(s.SSMValueHeads)
			add(p+"attn_qkv.weight", RoleWeight, h, 2*kd+vd)
			add(p+"attn_gate.weight", RoleWeight, h, vd)
			add(p+"ssm_beta.weight", RoleWeight, h, hv)
			add(p+"ssm_alpha.weight", RoleWeight, h, hv)
			add(p+"ssm_a", RoleFloat, hv)
			add(p+"ssm_dt.bias", RoleFloat, hv)
			add(p+"ssm_conv1d.weight", RoleFloat, int64(s.SSMConv), 2*kd+vd)
			add(p+"ssm_norm.weight", RoleFloat, int64(s.SSMHeadDim))
			add(p+"ssm_out.weight", RoleWeight, vd, h)
			add(p+"post_attention_norm.weight", RoleFloat, h)
		}
		add(p+"ffn_gate.weight", RoleWeight, h, int64(s.FFN))
		add(p+"ffn_up.weight", RoleWeight, h, int64(s.FFN))
		add(p+"ffn_down.weight", RoleWeight, int64(s.FFN), h)
	}
	return ts
}

// Params is the number of parameters in the shape's tensors.
func (s *Shape) Params() int64 {
	var n int64
	for _, t := range s.Tensors() {
		n += t.Elems()
	}
	return n
}

// KVBytes is the size of an attention cache of ctx positions with elements
// of elemBytes (4 for f32, 2 for f16): keys and values of every
// full-attention layer.
func (s *Shape) KVBytes(ctx, elemBytes int) int64 {
	attn := 0
	for i := range s.Layers {
		if s.FullAttention(i) {
			attn++
		}
	}
	return int64(attn) * 2 * int64(ctx) * int64(s.KVHeads*s.HeadDim) * int64(elemBytes)
}
