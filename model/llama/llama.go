// Package llama implements the dense decoder-only transformers of the llama
// family: GGUF architectures "llama" (llama2.c and Llama models: RoPE on
// adjacent pairs) and "qwen3" (Ternary Bonsai 1.7B/4B/8B: per-head q/k
// RMSNorm before NEOX RoPE, optional YaRN). They differ only in those
// switches, so one package serves both.
package llama

import (
	"fmt"

	"trit/kernels"
	"trit/model"
	"trit/model/kvcache"
	"trit/ops"
)

func init() {
	model.Register("llama", func(src model.Source, o model.Options) (model.Model, error) { return load(src, o, "llama") })
	model.Register("qwen3", func(src model.Source, o model.Options) (model.Model, error) { return load(src, o, "qwen3") })
}

type layer struct {
	attnNorm, ffnNorm []float32
	qNorm, kNorm      []float32 // qwen3 only
	q, k, v, o        *model.Linear
	gate, up, down    *model.Linear
}

// Model is a loaded llama-family model.
type Model struct {
	info    model.Info
	src     model.Source
	pool    *kernels.Pool
	ownPool bool

	hidden, ffn int
	eps         float32
	attn        model.Attention
	kvConfig    kvcache.Config
	qk          []model.QK // per layer
	rope        *ops.Rope
	embd        *kernels.Matrix
	out         *model.Linear
	outNorm     []float32
	layers      []layer

	scratch scratch
}

func load(src model.Source, opts model.Options, arch string) (*Model, error) {
	m, own, err := model.WithPool(opts, func(pool *kernels.Pool) (*Model, error) { return build(src, opts, arch, pool) })
	if err != nil {
		return nil, err
	}
	m.ownPool = own
	return m, nil
}

func build(src model.Source, opts model.Options, arch string, pool *kernels.Pool) (*Model, error) {
	w := &model.Weights{Src: src, Arch: arch, Pool: pool, Exact: opts.Exact}
	m := &Model{src: src, pool: pool}
	var err error
	get := func(key string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = w.MustUint(key)
		return v
	}
	m.hidden = get("embedding_length")
	nLayers := get("block_count")
	m.ffn = get("feed_forward_length")
	heads := get("attention.head_count")
	if err != nil {
		return nil, err
	}
	if heads <= 0 || m.hidden <= 0 || nLayers <= 0 || m.ffn <= 0 {
		return nil, fmt.Errorf("llama: bad hyperparameters: hidden %d, layers %d, ffn %d, heads %d", m.hidden, nLayers, m.ffn, heads)
	}
	kvHeads := w.Uint("attention.head_count_kv", heads)
	headDim := w.Uint("attention.key_length", m.hidden/heads)
	if kvHeads <= 0 || heads%kvHeads != 0 || headDim <= 0 {
		return nil, fmt.Errorf("llama: bad attention shape: %d heads, %d kv heads, head dim %d", heads, kvHeads, headDim)
	}
	m.attn = model.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Scale: model.DefaultScale(headDim)}
	m.eps = float32(w.Float("attention.layer_norm_rms_epsilon", 1e-5))

	rc := ops.RopeConfig{
		HeadDim: headDim,
		Dims:    w.Uint("rope.dimension_count", headDim),
		Base:    w.Float("rope.freq_base", 10000),
		Neox:    arch == "qwen3",
	}
	if err := model.RopeScaling(w, &rc); err != nil {
		return nil, err
	}
	if m.rope, err = ops.NewRope(rc); err != nil {
		return nil, fmt.Errorf("llama: %w", err)
	}
	sections, err := model.RopeSections(w)
	if err != nil {
		return nil, err
	}

	embdT := w.Tensor("token_embd.weight")
	if embdT == nil || len(embdT.Dims) != 2 || embdT.Dims[0] != int64(m.hidden) {
		return nil, fmt.Errorf("llama: missing or misshapen token_embd.weight")
	}
	vocab := int(embdT.Dims[1])
	tok, err := w.Linear("token_embd.weight", m.hidden, vocab)
	if err != nil {
		return nil, err
	}
	m.embd = tok.M
	if w.Has("output.weight") {
		if m.out, err = w.Linear("output.weight", m.hidden, vocab); err != nil {
			return nil, err
		}
	} else {
		m.out = tok // tied head
	}
	if m.outNorm, err = w.Vector("output_norm.weight", m.hidden); err != nil {
		return nil, err
	}
	qDim, kvDim := heads*headDim, kvHeads*headDim
	m.layers = make([]layer, nLayers)
	for i := range m.layers {
		l := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		vec := func(name string, n int) []float32 {
			if err != nil {
				return nil
			}
			var v []float32
			v, err = w.Vector(p+name, n)
			return v
		}
		lin := func(name string, in, out int) *model.Linear {
			if err != nil {
				return nil
			}
			var v *model.Linear
			v, err = w.Linear(p+name, in, out)
			return v
		}
		l.attnNorm = vec("attn_norm.weight", m.hidden)
		l.ffnNorm = vec("ffn_norm.weight", m.hidden)
		if arch == "qwen3" {
			l.qNorm = vec("attn_q_norm.weight", headDim)
			l.kNorm = vec("attn_k_norm.weight", headDim)
		}
		l.q = lin("attn_q.weight", m.hidden, qDim)
		l.k = lin("attn_k.weight", m.hidden, kvDim)
		l.v = lin("attn_v.weight", m.hidden, kvDim)
		l.o = lin("attn_output.weight", qDim, m.hidden)
		l.gate = lin("ffn_gate.weight", m.hidden, m.ffn)
		l.up = lin("ffn_up.weight", m.hidden, m.ffn)
		l.down = lin("ffn_down.weight", m.ffn, m.hidden)
		if err != nil {
			return nil, err
		}
	}
	m.kvConfig = opts.KVConfig(nLayers, &m.attn)
	m.qk = make([]model.QK, nLayers)
	for i, l := range m.layers {
		m.qk[i] = model.QK{Attn: &m.attn, QNorm: l.qNorm, KNorm: l.kNorm, Eps: m.eps, Rope: m.rope, Sections: sections}
	}
	m.info = model.Info{
		Arch:       arch,
		Vocab:      vocab,
		Hidden:     m.hidden,
		Layers:     nLayers,
		ContextLen: w.Uint("context_length", 2048),
	}
	w.Summary(&m.info)
	m.info.KVTokenBytes = m.kvConfig.TokenBytes()
	return m, nil
}

// Info implements model.Model.
func (m *Model) Info() *model.Info { return &m.info }

// Close implements model.Model.
func (m *Model) Close() error {
	if m.ownPool {
		m.pool.Close()
	}
	return m.src.Close()
}

type state struct {
	kv   *kvcache.Cache
	rope model.RopeCursor
}

func (s *state) Pos() int              { return s.kv.Len() }
func (s *state) Cap() int              { return s.kv.Limit() }
func (s *state) Reset()                { s.kv.Truncate(0); s.rope.Reset() }
func (s *state) Grow(n int) error      { return s.kv.Reserve(s.kv.Len() + n) }
func (s *state) Clone() model.State    { return &state{kv: s.kv.Fork(), rope: s.rope} }
func (s *state) cache() *kvcache.Cache { return s.kv }
func (s *state) Bytes() map[string]int64 {
	return map[string]int64{"kv": s.kv.Bytes()}
}

func (s *state) FillSynthetic(n int, seed uint64) error { return s.kv.FillSynthetic(n, seed) }

func (s *state) Truncate(n int) bool {
	if n < 0 || n > s.kv.Len() {
		return false
	}
	if n == 0 {
		s.rope.Reset()
	} else if n < s.kv.Len() && s.rope.Shifted() {
		// The positions of the kept elements are not recorded.
		return false
	}
	s.kv.Truncate(n)
	return true
}

// NewState implements model.Model.
func (m *Model) NewState(ctx int) (model.State, error) {
	if ctx <= 0 {
		return nil, fmt.Errorf("llama: context size %d", ctx)
	}
	kv, err := kvcache.New(m.kvConfig, ctx)
	if err != nil {
		return nil, err
	}
	return &state{kv: kv}, nil
}
