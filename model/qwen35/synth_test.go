package qwen35_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"trit/gguf"
	"trit/quant"
)

// synth describes a small random hybrid model written with gguf.Writer.
type synth struct {
	arch                string // "qwen35" (default) or "qwen3next"
	hidden, layers, ffn int
	interval            int
	heads, kvHeads, hd  int
	ropeDims            int
	hk, hv, dk, convK   int
	vocab, nextn        int
	tied                bool          // no output.weight: the head is the embedding
	format              *quant.Format // of the matrices; nil means F32
	seed                uint64
}

func smallSynth() synth {
	return synth{
		arch: "qwen35", hidden: 64, layers: 4, ffn: 128, interval: 4,
		heads: 4, kvHeads: 2, hd: 16, ropeDims: 8,
		hk: 2, hv: 4, dk: 16, convK: 4, vocab: 96, seed: 1,
	}
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// write builds the model file in dir and returns its path.
func (c synth) write(t testing.TB, dir string) string {
	t.Helper()
	if c.arch == "" {
		c.arch = "qwen35"
	}
	rng := rand.New(rand.NewPCG(c.seed, 7))
	w := gguf.NewWriter()
	a := c.arch + "."
	kv := func(k string, v gguf.Value) {
		if err := w.AddKV(k, v); err != nil {
			t.Fatal(err)
		}
	}
	u := func(x int) gguf.Value { return gguf.Uint32(uint32(x)) }
	kv("general.architecture", gguf.String(c.arch))
	kv(a+"context_length", u(4096))
	kv(a+"embedding_length", u(c.hidden))
	kv(a+"block_count", u(c.layers+c.nextn))
	kv(a+"feed_forward_length", u(c.ffn))
	kv(a+"attention.head_count", u(c.heads))
	kv(a+"attention.head_count_kv", u(c.kvHeads))
	kv(a+"attention.key_length", u(c.hd))
	kv(a+"attention.value_length", u(c.hd))
	kv(a+"attention.layer_norm_rms_epsilon", gguf.Float32(1e-6))
	kv(a+"rope.freq_base", gguf.Float32(1e7))
	kv(a+"rope.dimension_count", u(c.ropeDims))
	kv(a+"ssm.conv_kernel", u(c.convK))
	kv(a+"ssm.state_size", u(c.dk))
	kv(a+"ssm.group_count", u(c.hk))
	kv(a+"ssm.time_step_rank", u(c.hv))
	kv(a+"ssm.inner_size", u(c.hv*c.dk))
	kv(a+"full_attention_interval", u(c.interval))
	if c.nextn > 0 {
		kv(a+"nextn_predict_layers", u(c.nextn))
	}
	tensor := func(name string, dims []int64, v []float32) {
		if err := w.AddTensor(name, quant.F32, dims, f32bytes(v)); err != nil {
			t.Fatal(err)
		}
	}
	gauss := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}
	mat := func(name string, in, out int) {
		v := gauss(in*out, 1/math.Sqrt(float64(in)))
		if c.format == nil {
			tensor(name, []int64{int64(in), int64(out)}, v)
			return
		}
		rb, err := c.format.RowBytes(int64(in))
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, rb*int64(out))
		if err := c.format.Encode(data, v); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(name, c.format, []int64{int64(in), int64(out)}, data); err != nil {
			t.Fatal(err)
		}
	}
	norm := func(name string, n int) {
		v := gauss(n, 0.1)
		for i := range v {
			v[i]++
		}
		tensor(name, []int64{int64(n)}, v)
	}
	H := c.hidden
	mat("token_embd.weight", H, c.vocab)
	if !c.tied {
		mat("output.weight", H, c.vocab)
	}
	norm("output_norm.weight", H)
	kd, vd := c.hk*c.dk, c.hv*c.dk
	attn := func(p string) {
		mat(p+"attn_q.weight", H, 2*c.heads*c.hd)
		mat(p+"attn_k.weight", H, c.kvHeads*c.hd)
		mat(p+"attn_v.weight", H, c.kvHeads*c.hd)
		mat(p+"attn_output.weight", c.heads*c.hd, H)
		norm(p+"attn_q_norm.weight", c.hd)
		norm(p+"attn_k_norm.weight", c.hd)
	}
	common := func(p string) {
		norm(p+"attn_norm.weight", H)
		norm(p+"post_attention_norm.weight", H)
		mat(p+"ffn_gate.weight", H, c.ffn)
		mat(p+"ffn_up.weight", H, c.ffn)
		mat(p+"ffn_down.weight", c.ffn, H)
	}
	for i := range c.layers {
		p := fmt.Sprintf("blk.%d.", i)
		common(p)
		if (i+1)%c.interval == 0 {
			attn(p)
			continue
		}
		mat(p+"attn_qkv.weight", H, 2*kd+vd)
		mat(p+"attn_gate.weight", H, vd)
		if c.arch == "qwen3next" {
			mat(p+"ssm_ba.weight", H, 2*c.hv)
		} else {
			mat(p+"ssm_beta.weight", H, c.hv)
			mat(p+"ssm_alpha.weight", H, c.hv)
		}
		mat(p+"ssm_out.weight", vd, H)
		tensor(p+"ssm_conv1d.weight", []int64{int64(c.convK), int64(2*kd + vd)}, gauss(c.convK*(2*kd+vd), 0.5))
		sa := make([]float32, c.hv)
		for j := range sa {
			sa[j] = -float32(math.Exp(rng.Float64()*2 - 1))
		}
		tensor(p+"ssm_a", []int64{int64(c.hv)}, sa)
		tensor(p+"ssm_dt.bias", []int64{int64(c.hv)}, gauss(c.hv, 0.5))
		norm(p+"ssm_norm.weight", c.dk)
	}
	for i := c.layers; i < c.layers+c.nextn; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		common(p)
		attn(p)
		mat(p+"nextn.eh_proj.weight", 2*H, H)
		norm(p+"nextn.enorm.weight", H)
		norm(p+"nextn.hnorm.weight", H)
		norm(p+"nextn.shared_head_norm.weight", H)
	}
	path := filepath.Join(dir, fmt.Sprintf("synth-%s-%d.gguf", c.arch, c.seed))
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}
