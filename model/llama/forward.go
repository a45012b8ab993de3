package llama

import (
	"trit/kernels"

	"trit/model"
	"trit/ops"
)

// scratch holds the activations of one Forward call, grown as needed and
// reused so that decoding allocates nothing per token.
type scratch struct {
	x, xn, q, k, v, att, gate, up []float32
	logitRows                     []float32
	rope                          []float32 // cos/sin tables, one per token
	acts                          kernels.Acts
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

	tl := m.rope.TableLen()
	s.rope = grow(s.rope, n*tl)
	if err := model.Embed(steps, H, s.x, func(t int, dst []float32) { m.embd.Row(t, dst) }); err != nil {
		return err
	}
	i := 0
	for _, step := range steps {
		st := step.State.(*state)
		for j := range step.Tokens {
			m.ropeTable(step, st, j, s.rope[i*tl:(i+1)*tl])
			i++
		}
	}
	for li := range m.layers {
		l := &m.layers[li]
		for r := range n {
			ops.RMSNorm(s.xn[r*H:(r+1)*H], s.x[r*H:(r+1)*H], l.attnNorm, m.eps)
		}
		m.pool.Quantize(&s.acts, s.xn, n, H)
		l.q.ForwardActs(s.q, s.xn, &s.acts, n)
		l.k.ForwardActs(s.k, s.xn, &s.acts, n)
		l.v.ForwardActs(s.v, s.xn, &s.acts, n)
		r := 0
		for _, step := range steps {
			st := step.State.(*state)
			kv := &st.kv[li]
			for j := range step.Tokens {
				pos := st.pos + j
				q := s.q[r*qDim : (r+1)*qDim]
				k := s.k[r*kvDim : (r+1)*kvDim]
				if l.qNorm != nil {
					for h := range m.attn.Heads {
						ops.RMSNorm(q[h*hd:(h+1)*hd], q[h*hd:(h+1)*hd], l.qNorm, m.eps)
					}
					for h := range m.attn.KVHeads {
						ops.RMSNorm(k[h*hd:(h+1)*hd], k[h*hd:(h+1)*hd], l.kNorm, m.eps)
					}
				}
				m.rope.ApplyTable(q, m.attn.Heads, s.rope[r*tl:(r+1)*tl])
				m.rope.ApplyTable(k, m.attn.KVHeads, s.rope[r*tl:(r+1)*tl])
				kv.Store(pos, k, s.v[r*kvDim:(r+1)*kvDim])
				r++
			}
		}
		r = 0
		for _, step := range steps {
			st := step.State.(*state)
			nt := len(step.Tokens)
			m.attn.Attend(m.pool, s.att[r*qDim:(r+nt)*qDim], s.q[r*qDim:(r+nt)*qDim], &st.kv[li], nt, st.pos)
			r += nt
		}
		l.o.Forward(s.xn, s.att, n)
		ops.Add(s.x, s.x, s.xn)
		for r := range n {
			ops.RMSNorm(s.xn[r*H:(r+1)*H], s.x[r*H:(r+1)*H], l.ffnNorm, m.eps)
		}
		m.pool.Quantize(&s.acts, s.xn, n, H)
		l.gate.ForwardActs(s.gate, s.xn, &s.acts, n)
		l.up.ForwardActs(s.up, s.xn, &s.acts, n)
		ops.SwiGLU(s.gate, s.gate, s.up)
		l.down.Forward(s.xn, s.gate, n)
		ops.Add(s.x, s.x, s.xn)
	}
	for _, step := range steps {
		st := step.State.(*state)
		st.rope.Advance(step, st.pos)
		st.pos += len(step.Tokens)
	}
	return m.logits(steps, s)
}

// ropeTable writes the rotary table of token j of step into buf: plain
// positions, or M-RoPE sections when the file declares them.
func (m *Model) ropeTable(step model.Step, st *state, j int, buf []float32) {
	p := st.rope.Pos(step, j, st.pos)
	if m.sections == ([4]int{}) {
		m.rope.Table(p[0], buf)
		return
	}
	m.rope.TableSections(p, m.sections, buf)
}

// logits applies the final norm and the head to the rows the steps ask for.
func (m *Model) logits(steps []model.Step, s *scratch) error {
	project := func(dst, x []float32, n int) error { m.out.Forward(dst, x, n); return nil }
	return model.Head(steps, s.x, m.hidden, m.info.Vocab, m.outNorm, m.eps, project, &s.xn, &s.logitRows)
}
