package qwen35

import (
	"trit/hadamard"
	"trit/model"
	"trit/model/kvcache"
	"trit/ops"
)

// scratch holds the activations of one Forward call, grown as needed and
// reused so that decoding allocates little per token.
type scratch struct {
	x, xn, y               []float32
	qkv, conv, z, b, a, ba []float32
	o                      []float32
	qg, q, gate, k, v, att []float32
	ffnGate, ffnUp         []float32
	rows, logits           []float32
	in, mid                hadamard.Site
	tab                    []float32
	seqs                   []model.AttnSeq
	seqsNow                []model.AttnSeq // this call's sequences
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// mul multiplies the site's input (rotated if p is) by p.
func mul(p proj, s *hadamard.Site, dst []float32, n int) error {
	x, err := s.Input(p.rotated)
	if err != nil {
		return err
	}
	p.Forward(dst, x, n)
	return nil
}

// Forward implements model.Model. It is not safe for concurrent use.
func (m *Model) Forward(steps []model.Step) error {
	n, err := model.CheckSteps("qwen35", steps, m.info.Vocab, func(st model.State) bool { _, ok := st.(*state); return ok })
	if err != nil {
		return err
	}
	H := m.hidden
	s := &m.scratch
	s.x = grow(s.x, n*H)
	s.xn = grow(s.xn, n*H)
	s.y = grow(s.y, n*H)
	qd := m.attn.Heads * m.attn.HeadDim
	s.q = grow(s.q, n*qd)
	s.att = grow(s.att, n*qd)
	seqs, err := m.attn.Seqs(steps, func(st model.State) *kvcache.Cache { return st.(*state).kv }, s.q, s.att, &s.seqs)
	if err != nil {
		return err
	}
	s.seqsNow = seqs
	model.PlaceRope(steps, seqs, func(st model.State) *model.RopeCursor { return &st.(*state).rope })
	for li := range m.layers {
		if a := m.layers[li].at; a != nil {
			// The RoPE tables depend only on the positions: once per call.
			s.tab = a.qk.RopeTables(m.pool, seqs, &s.tab)
			break
		}
	}
	if err := model.Embed(steps, H, s.x, func(t int, dst []float32) { m.embd.Row(t, dst) }); err != nil {
		return err
	}
	if m.embdInv {
		if err := m.rot.Inverse(s.x, H); err != nil {
			return err
		}
	}
	for li := range m.layers {
		l := &m.layers[li]
		m.norm(s.xn, s.x, l.attnNorm, n)
		s.in.Bind(m.rot, s.xn, H)
		var err error
		if l.dn != nil {
			err = m.deltaNet(l, steps, n)
		} else {
			err = m.attention(l, steps, n)
		}
		if err != nil {
			return err
		}
		ops.Add(s.x, s.x, s.y)
		m.norm(s.xn, s.x, l.postNorm, n)
		if err := m.mlp(l, n); err != nil {
			return err
		}
		ops.Add(s.x, s.x, s.y)
	}
	model.Advance(seqs)
	return m.head(steps)
}

// norm applies RMSNorm with weight w to n rows of x.
func (m *Model) norm(dst, x, w []float32, n int) {
	H := m.hidden
	m.pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ops.RMSNorm(dst[r*H:(r+1)*H], x[r*H:(r+1)*H], w, m.eps)
		}
	})
}

// mlp computes s.y = down(silu(gate(xn)) · up(xn)).
func (m *Model) mlp(l *layer, n int) error {
	s := &m.scratch
	s.ffnGate = grow(s.ffnGate, n*m.ffn)
	s.ffnUp = grow(s.ffnUp, n*m.ffn)
	s.in.Bind(m.rot, s.xn, m.hidden)
	if err := mul(l.gate, &s.in, s.ffnGate, n); err != nil {
		return err
	}
	if err := mul(l.up, &s.in, s.ffnUp, n); err != nil {
		return err
	}
	ops.SwiGLU(s.ffnGate, s.ffnGate, s.ffnUp)
	s.mid.Permute = nil
	s.mid.Bind(m.rot, s.ffnGate, m.ffn)
	return mul(l.down, &s.mid, s.y, n)
}

// attention computes s.y for a gated full-attention layer: q (with its
// per-head gate), k, v; q/k RMSNorm; partial NEOX RoPE; causal GQA
// attention over the cache; output × sigmoid(gate); output projection.
func (m *Model) attention(l *layer, steps []model.Step, n int) error {
	s := &m.scratch
	a := l.at
	hd := m.attn.HeadDim
	heads, kvHeads := m.attn.Heads, m.attn.KVHeads
	qd, kvd := heads*hd, kvHeads*hd
	s.qg = grow(s.qg, n*2*qd)
	s.gate = grow(s.gate, n*qd)
	s.k = grow(s.k, n*kvd)
	s.v = grow(s.v, n*kvd)
	for _, p := range []struct {
		w   proj
		dst []float32
	}{{a.q, s.qg}, {a.k, s.k}, {a.v, s.v}} {
		if err := mul(p.w, &s.in, p.dst, n); err != nil {
			return err
		}
	}
	// Rows of attn_q are [query (hd) | gate (hd)] per head.
	for r := range n {
		for h := range heads {
			src := s.qg[(r*heads+h)*2*hd:]
			copy(s.q[(r*heads+h)*hd:(r*heads+h+1)*hd], src[:hd])
			copy(s.gate[(r*heads+h)*hd:(r*heads+h+1)*hd], src[hd:2*hd])
		}
	}
	a.qk.Prepare(m.pool, l.kv, s.seqsNow, s.q, s.k, s.v, s.tab)
	m.attn.Attend(m.pool, l.kv, s.seqsNow)
	ops.Sigmoid(s.gate, s.gate)
	ops.Mul(s.att, s.att, s.gate)
	s.mid.Permute = nil
	s.mid.Bind(m.rot, s.att, qd)
	return mul(a.o, &s.mid, s.y, n)
}

// head applies the final norm and the output matrix (on rotated inputs
// when the head is rotated) to the rows the steps ask logits for.
func (m *Model) head(steps []model.Step) error {
	s := &m.scratch
	project := func(dst, x []float32, n int) error {
		s.mid.Permute = nil
		s.mid.Bind(m.rot, x, m.hidden)
		return mul(m.out, &s.mid, dst, n)
	}
	return model.Head(steps, s.x, m.hidden, m.info.Vocab, m.outNorm, m.eps, project, &s.rows, &s.logits)
}
