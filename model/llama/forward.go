package llama

import (
	"trit/kernels"

	"trit/model"
	"trit/model/kvcache"
	"trit/ops"
)

// scratch holds the activations of one Forward call, grown as needed and
// reused so that decoding allocates nothing per token.
type scratch struct {
	x, xn, q, k, v, att, gate, up []float32
	logitRows                     []float32
	rope                          []float32 // cos/sin tables, one per token
	acts                          kernels.Acts
	seqs                          []model.AttnSeq
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Forward implements model.Model. It is not safe for concurrent use.
func (m *Model) Forward(steps []model.Step) error {
	n, err := model.CheckSteps("llama", steps, m.info.Vocab, func(st model.State) bool { _, ok := st.(*state); return ok })
	if err != nil {
		return err
	}
	H, hd := m.hidden, m.attn.HeadDim
	qDim, kvDim := m.attn.Heads*hd, m.attn.KVHeads*hd
	s := &m.scratch
	s.x = grow(s.x, n*H)
	s.xn = grow(s.xn, n*H)
	s.q = grow(s.q, n*qDim)
	s.k = grow(s.k, n*kvDim)
	s.v = grow(s.v, n*kvDim)
	s.att = grow(s.att, n*qDim)
	s.gate = grow(s.gate, n*m.ffn)
	s.up = grow(s.up, n*m.ffn)

	seqs, err := m.attn.Seqs(steps, func(st model.State) *kvcache.Cache { return st.(*state).kv }, s.q, s.att, &s.seqs)
	if err != nil {
		return err
	}
	model.PlaceRope(steps, seqs, func(st model.State) *model.RopeCursor { return &st.(*state).rope })
	if err := model.Embed(steps, H, s.x, func(t int, dst []float32) { m.embd.Row(t, dst) }); err != nil {
		return err
	}
	tabs := m.qk[0].RopeTables(m.pool, seqs, &s.rope)
	for li := range m.layers {
		l := &m.layers[li]
		m.norm(s.xn, s.x, l.attnNorm, n)
		m.pool.Quantize(&s.acts, s.xn, n, H)
		l.q.ForwardActs(s.q, s.xn, &s.acts, n)
		l.k.ForwardActs(s.k, s.xn, &s.acts, n)
		l.v.ForwardActs(s.v, s.xn, &s.acts, n)
		m.qk[li].Prepare(m.pool, li, seqs, s.q, s.k, s.v, tabs)
		m.attn.Attend(m.pool, li, seqs)
		l.o.Forward(s.xn, s.att, n)
		ops.Add(s.x, s.x, s.xn)
		m.norm(s.xn, s.x, l.ffnNorm, n)
		m.pool.Quantize(&s.acts, s.xn, n, H)
		l.gate.ForwardActs(s.gate, s.xn, &s.acts, n)
		l.up.ForwardActs(s.up, s.xn, &s.acts, n)
		ops.SwiGLU(s.gate, s.gate, s.up)
		l.down.Forward(s.xn, s.gate, n)
		ops.Add(s.x, s.x, s.xn)
	}
	model.Advance(seqs)
	return m.logits(steps, s)
}

// norm applies RMSNorm with weight w to n rows of x, on the pool.
func (m *Model) norm(dst, x, w []float32, n int) {
	H := m.hidden
	m.pool.For(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ops.RMSNorm(dst[r*H:(r+1)*H], x[r*H:(r+1)*H], w, m.eps)
		}
	})
}

// logits applies the final norm and the head to the rows the steps ask for.
func (m *Model) logits(steps []model.Step, s *scratch) error {
	project := func(dst, x []float32, n int) error { m.out.Forward(dst, x, n); return nil }
	return model.Head(steps, s.x, m.hidden, m.info.Vocab, m.outNorm, m.eps, project, &s.xn, &s.logitRows)
}
