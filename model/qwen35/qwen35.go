// Package qwen35 implements the hybrid Qwen3.5 / Qwen3.6 language models
// (Ternary Bonsai 2-9B and 27B): GGUF architectures "qwen35" and
// "qwen3next". Three of every four layers are Gated DeltaNet layers (a
// causal convolution followed by a gated delta-rule recurrence whose state
// has a fixed size), the fourth is gated full attention with a KV cache.
//
// Prompts run the delta rule in its chunked form (blocks of 64 tokens,
// matrix products inside a block), decoding in its recurrent form. Files
// that declare a Hadamard rotation (`prism.hadamard.*` keys) have their
// activations rotated before every folded weight, see package hadamard.
//
// Importing the package registers both architectures with package model.
package qwen35

import (
	"fmt"

	"trit/gguf"
	"trit/hadamard"
	"trit/kernels"
	"trit/model"
	"trit/model/kvcache"
	"trit/ops"
)

func init() {
	model.Register("qwen35", func(src model.Source, o model.Options) (model.Model, error) { return load(src, o, "qwen35") })
	model.Register("qwen3next", func(src model.Source, o model.Options) (model.Model, error) { return load(src, o, "qwen3next") })
}

// proj is a weight matrix and whether it is stored Hadamard-rotated.
type proj struct {
	*model.Linear
	rotated bool
}

// deltaNet holds the tensors of a Gated DeltaNet layer.
type deltaNet struct {
	qkv, gate   proj // attn_qkv (q|k|v channels), attn_gate (z)
	beta, alpha proj // ssm_beta, ssm_alpha; nil when fused as ba
	ba          proj // qwen3next: ssm_ba, per key head [b (r) | a (r)]
	out         proj // ssm_out
	conv        []float32
	a, dt, norm []float32 // ssm_a = −exp(A_log), ssm_dt.bias, ssm_norm
}

// attention holds the tensors of a gated full-attention layer.
type attention struct {
	q, k, v, o   proj // q holds query and gate interleaved per head
	qNorm, kNorm []float32
	qk           model.QK
}

type layer struct {
	attnNorm, postNorm []float32
	dn                 *deltaNet  // nil for full-attention layers
	at                 *attention // nil for Gated DeltaNet layers
	gate, up, down     proj
	kv                 int // index among full-attention layers
	rec                int // index among Gated DeltaNet layers
}

// mtpLayer is a multi-token-prediction block (`blk.L.nextn.*` plus a
// full-attention decoder layer), loaded for speculative decoding and kept
// out of the main stack.
type mtpLayer struct {
	ehProj          proj
	eNorm, hNorm    []float32
	sharedHeadNorm  []float32
	layer           layer
	embed, headProj proj // optional dedicated embedding and head
}

// Model is a loaded Qwen3.5-family model.
type Model struct {
	info    model.Info
	src     model.Source
	pool    *kernels.Pool
	ownPool bool

	hidden, ffn int
	eps         float32
	attn        model.Attention
	kvConfig    kvcache.Config
	rope        *ops.Rope
	sections    [4]int // M-RoPE sections (t, h, w, e pairs); zero for plain RoPE

	// Gated DeltaNet shape.
	hk, hv, dk, dv, convK int
	grouped               bool // value head j reads key head j/r (else j%hk)

	embd       *kernels.Matrix
	embdInv    bool // embedding rows stored as R·e
	out        proj
	outNorm    []float32
	layers     []layer
	nKV, nRec  int
	mtp        []mtpLayer
	rot        *hadamard.Rotation
	groupedOut bool // ssm_out input columns in grouped value-head order

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

// maxDim bounds every hyperparameter that sizes a buffer, so that a hostile
// header cannot request absurd allocations before the tensor shapes (which
// must match the file's data) are checked.
const maxDim = 1 << 20

func build(src model.Source, opts model.Options, arch string, pool *kernels.Pool) (*Model, error) {
	w := &model.Weights{Src: src, Arch: arch, Pool: pool, Exact: opts.Exact}
	// qwen3next files and the HF-ordered sources (MLX packs, HF folders)
	// keep value heads grouped; qwen35 GGUF files tile them.
	m := &Model{src: src, pool: pool, grouped: arch == "qwen3next" || src.Layout().GroupedVHeads}
	var err error
	get := func(key string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = w.MustUint(key)
		if err == nil && (v <= 0 || v > maxDim) {
			err = fmt.Errorf("qwen35: %s.%s = %d is out of range", arch, key, v)
		}
		return v
	}
	m.hidden = get("embedding_length")
	blocks := get("block_count")
	m.ffn = get("feed_forward_length")
	heads := get("attention.head_count")
	kvHeads := get("attention.head_count_kv")
	headDim := get("attention.key_length")
	m.convK = get("ssm.conv_kernel")
	m.dk = get("ssm.state_size")
	m.hk = get("ssm.group_count")
	m.hv = get("ssm.time_step_rank")
	inner := get("ssm.inner_size")
	if err != nil {
		return nil, err
	}
	m.dv = m.dk
	nextn := w.Uint("nextn_predict_layers", 0)
	interval := w.Uint("full_attention_interval", 4)
	switch {
	case nextn < 0 || nextn >= blocks:
		return nil, fmt.Errorf("qwen35: %d MTP layers of %d blocks", nextn, blocks)
	case interval <= 0:
		return nil, fmt.Errorf("qwen35: full_attention_interval %d", interval)
	case heads%kvHeads != 0:
		return nil, fmt.Errorf("qwen35: %d heads not a multiple of %d kv heads", heads, kvHeads)
	case w.Uint("attention.value_length", headDim) != headDim:
		return nil, fmt.Errorf("qwen35: value length %d differs from key length %d", w.Uint("attention.value_length", headDim), headDim)
	case m.hv%m.hk != 0:
		return nil, fmt.Errorf("qwen35: %d value heads not a multiple of %d key heads", m.hv, m.hk)
	case inner != m.hv*m.dv:
		return nil, fmt.Errorf("qwen35: ssm.inner_size %d ≠ %d value heads × %d", inner, m.hv, m.dv)
	case m.dk > 1024 || int64(m.hv)*int64(m.dk)*int64(m.dk) > 1<<28:
		// The recurrent state (hv·dk² floats per layer and sequence) is
		// allocated by NewState; real models hold 32·128².
		return nil, fmt.Errorf("qwen35: recurrent state of %d heads × %d² is too large", m.hv, m.dk)
	case m.convK < 2 || m.convK > 64:
		return nil, fmt.Errorf("qwen35: conv kernel %d out of range [2, 64]", m.convK)
	}
	m.attn = model.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Scale: model.DefaultScale(headDim)}
	m.eps = float32(w.Float("attention.layer_norm_rms_epsilon", 1e-6))

	// Text-only M-RoPE reduces to plain positions when the sections cover
	// every rotary pair; image rows need the sections.
	if m.sections, err = model.RopeSections(w); err != nil {
		return nil, err
	}
	rc := ops.RopeConfig{
		HeadDim: headDim,
		Dims:    w.Uint("rope.dimension_count", headDim),
		Base:    w.Float("rope.freq_base", 1e7),
		Neox:    true,
	}
	if err := model.RopeScaling(w, &rc); err != nil {
		return nil, err
	}
	if m.rope, err = ops.NewRope(rc); err != nil {
		return nil, fmt.Errorf("qwen35: %w", err)
	}

	decl, err := declaration(src.Meta())
	if err != nil {
		return nil, err
	}
	ld := &loader{w: w, decl: decl, used: map[string]bool{}}
	if decl != nil {
		if m.rot, err = hadamard.New(decl); err != nil {
			return nil, err
		}
		ld.rot = m.rot
		m.groupedOut = decl.GDNVGrouped
	}

	embdT := w.Tensor("token_embd.weight")
	if embdT == nil || len(embdT.Dims) != 2 || embdT.Dims[0] != int64(m.hidden) || embdT.Dims[1] <= 0 || embdT.Dims[1] > 1<<24 {
		return nil, fmt.Errorf("qwen35: missing or misshapen token_embd.weight")
	}
	vocab := int(embdT.Dims[1])
	tok, err := w.Linear("token_embd.weight", m.hidden, vocab)
	if err != nil {
		return nil, err
	}
	m.embd = tok.M
	if decl != nil {
		if decl.Rotated("token_embd.weight") {
			return nil, fmt.Errorf("%w: token_embd.weight listed as a rotated input weight; trit implements only its inverse rotation", hadamard.ErrInvalid)
		}
		if m.embdInv = decl.InverseRotated("token_embd.weight"); m.embdInv {
			ld.used["token_embd.weight"] = true
			if err := m.rot.Prepare(m.hidden); err != nil {
				return nil, fmt.Errorf("qwen35: token_embd.weight: %w", err)
			}
		}
	}
	if w.Has("output.weight") {
		m.out = ld.proj("output.weight", m.hidden, vocab)
	} else {
		// Tied head: a rotated embedding table is R·e row by row, which as
		// a matrix is E·Rᵀ, so the head's input is rotated forward.
		m.out = proj{Linear: tok, rotated: m.embdInv}
	}
	m.outNorm = ld.vec("output_norm.weight", m.hidden)

	main := blocks - nextn
	m.layers = make([]layer, main)
	for i := range m.layers {
		full := (i+1)%interval == 0
		m.layers[i] = m.loadLayer(ld, fmt.Sprintf("blk.%d.", i), full)
		if full {
			m.layers[i].kv = m.nKV
			m.nKV++
		} else {
			m.layers[i].rec = m.nRec
			m.nRec++
		}
	}
	for i := main; i < blocks; i++ {
		m.mtp = append(m.mtp, m.loadMTP(ld, i, vocab))
	}
	if ld.err != nil {
		return nil, ld.err
	}
	m.kvConfig = opts.KVConfig(m.nKV, &m.attn)
	for i := range m.layers {
		if a := m.layers[i].at; a != nil {
			a.qk = model.QK{Attn: &m.attn, QNorm: a.qNorm, KNorm: a.kNorm, Eps: m.eps, Rope: m.rope, Sections: m.sections}
		}
	}
	if decl != nil {
		for _, n := range append(decl.WeightNames, decl.InverseWeightNames...) {
			if !ld.used[n] {
				return nil, fmt.Errorf("%w: %s is declared rotated but is not a weight trit rotates in a %s model", hadamard.ErrInvalid, n, arch)
			}
		}
	}
	m.info = model.Info{
		Arch:       arch,
		Vocab:      vocab,
		Hidden:     m.hidden,
		Layers:     main,
		ContextLen: w.Uint("context_length", 4096),
		Recurrent:  true,
	}
	w.Summary(&m.info)
	m.info.KVTokenBytes = m.kvConfig.TokenBytes()
	if decl != nil {
		m.info.Notes = append(m.info.Notes, fmt.Sprintf("Hadamard-rotated weights: %d matrices, block %d, signs %s", len(decl.WeightNames), decl.BlockSize, decl.SignMode))
	}
	if len(m.mtp) > 0 {
		m.info.Notes = append(m.info.Notes, fmt.Sprintf("%d MTP layer(s) loaded, not run", len(m.mtp)))
	}
	return m, nil
}

// declaration reads the source's Hadamard declaration, if any.
func declaration(meta *gguf.Metadata) (*hadamard.Declaration, error) {
	return hadamard.FromKeys(meta, meta.Keys())
}

// loader reads tensors, remembers the first error and which declared
// rotated weights it has met.
type loader struct {
	w    *model.Weights
	decl *hadamard.Declaration
	rot  *hadamard.Rotation
	used map[string]bool
	err  error
}

func (l *loader) proj(name string, in, out int) proj {
	if l.err != nil {
		return proj{}
	}
	lin, err := l.w.Linear(name, in, out)
	if err != nil {
		l.err = err
		return proj{}
	}
	p := proj{Linear: lin}
	if l.decl != nil {
		if l.decl.InverseRotated(name) {
			l.err = fmt.Errorf("%w: %s listed for the inverse rotation; trit implements it only for token_embd.weight", hadamard.ErrInvalid, name)
			return proj{}
		}
		if l.decl.Rotated(name) {
			if err := l.rot.Prepare(in); err != nil {
				l.err = fmt.Errorf("qwen35: %s: %w", name, err)
				return proj{}
			}
			p.rotated = true
			l.used[name] = true
		}
	}
	return p
}

func (l *loader) vec(name string, n int) []float32 {
	if l.err != nil {
		return nil
	}
	v, err := l.w.Vector(name, n)
	if err != nil {
		l.err = err
	}
	return v
}

func (m *Model) loadLayer(ld *loader, p string, full bool) layer {
	H := m.hidden
	l := layer{
		attnNorm: ld.vec(p+"attn_norm.weight", H),
		postNorm: ld.vec(p+"post_attention_norm.weight", H),
	}
	if ld.err == nil && ld.w.Has(p+"ffn_gate_inp.weight") {
		ld.err = fmt.Errorf("qwen35: %sffn_gate_inp.weight: mixture-of-experts layers are not supported", p)
	}
	l.gate = ld.proj(p+"ffn_gate.weight", H, m.ffn)
	l.up = ld.proj(p+"ffn_up.weight", H, m.ffn)
	l.down = ld.proj(p+"ffn_down.weight", m.ffn, H)
	if full {
		l.at = m.loadAttention(ld, p)
		return l
	}
	kd, vd := m.hk*m.dk, m.hv*m.dv
	c := 2*kd + vd
	dn := &deltaNet{}
	if ld.err == nil && ld.w.Has(p+"ssm_in.weight") {
		ld.err = fmt.Errorf("qwen35: %sssm_in.weight: fused qkvz projections (older qwen3next files) are not supported; convert again", p)
	}
	dn.qkv = ld.proj(p+"attn_qkv.weight", H, c)
	dn.gate = ld.proj(p+"attn_gate.weight", H, vd)
	if ld.err == nil && ld.w.Has(p+"ssm_ba.weight") {
		dn.ba = ld.proj(p+"ssm_ba.weight", H, 2*m.hv)
	} else {
		dn.beta = ld.proj(p+"ssm_beta.weight", H, m.hv)
		dn.alpha = ld.proj(p+"ssm_alpha.weight", H, m.hv)
	}
	dn.out = ld.proj(p+"ssm_out.weight", vd, H)
	if ld.err == nil {
		var err error
		if dn.conv, err = ld.w.Tensor2(p+"ssm_conv1d.weight", m.convK, c); err != nil {
			ld.err = err
		}
	}
	dn.a = ld.vec(p+"ssm_a", m.hv)
	dn.dt = ld.vec(p+"ssm_dt.bias", m.hv)
	dn.norm = ld.vec(p+"ssm_norm.weight", m.dv)
	l.dn = dn
	return l
}

func (m *Model) loadAttention(ld *loader, p string) *attention {
	H, hd := m.hidden, m.attn.HeadDim
	qd, kvd := m.attn.Heads*hd, m.attn.KVHeads*hd
	return &attention{
		q:     ld.proj(p+"attn_q.weight", H, 2*qd),
		k:     ld.proj(p+"attn_k.weight", H, kvd),
		v:     ld.proj(p+"attn_v.weight", H, kvd),
		o:     ld.proj(p+"attn_output.weight", qd, H),
		qNorm: ld.vec(p+"attn_q_norm.weight", hd),
		kNorm: ld.vec(p+"attn_k_norm.weight", hd),
	}
}

func (m *Model) loadMTP(ld *loader, i, vocab int) mtpLayer {
	p := fmt.Sprintf("blk.%d.", i)
	H := m.hidden
	t := mtpLayer{
		ehProj:         ld.proj(p+"nextn.eh_proj.weight", 2*H, H),
		eNorm:          ld.vec(p+"nextn.enorm.weight", H),
		hNorm:          ld.vec(p+"nextn.hnorm.weight", H),
		sharedHeadNorm: ld.vec(p+"nextn.shared_head_norm.weight", H),
		layer:          m.loadLayer(ld, p, true),
	}
	if ld.err == nil && ld.w.Has(p+"nextn.embed_tokens.weight") {
		t.embed = ld.proj(p+"nextn.embed_tokens.weight", H, vocab)
	}
	if ld.err == nil && ld.w.Has(p+"nextn.shared_head_head.weight") {
		t.headProj = ld.proj(p+"nextn.shared_head_head.weight", H, vocab)
	}
	return t
}

// MTPLayers returns the number of multi-token-prediction layers the file
// holds (`nextn_predict_layers`). They are loaded but not part of the main
// stack that Forward runs.
func (m *Model) MTPLayers() int { return len(m.mtp) }

// Info implements model.Model.
func (m *Model) Info() *model.Info { return &m.info }

// Close implements model.Model.
func (m *Model) Close() error {
	if m.ownPool {
		m.pool.Close()
	}
	return m.src.Close()
}
