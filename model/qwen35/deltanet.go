package qwen35

import (
	"math"

	"trit/model"
	"trit/ops"
)

// chunkLen is the block length of the chunked delta rule, as in llama.cpp
// and Hugging Face: long enough that the products inside a block run at
// matrix speed, short enough that its triangular solve stays cheap.
const chunkLen = 64

// deltaNet computes s.y for a Gated DeltaNet layer from s.xn (bound to
// s.in): projections, causal convolution + SiLU, per-head L2 norm of q and
// k, gates, the delta rule per value head, gated RMSNorm and ssm_out.
func (m *Model) deltaNet(l *layer, steps []model.Step, n int) error {
	s := &m.scratch
	dn := l.dn
	hv := m.hv
	kd, vd := m.hk*m.dk, hv*m.dv
	c := 2*kd + vd
	s.qkv = grow(s.qkv, n*c)
	s.conv = grow(s.conv, n*c)
	s.z = grow(s.z, n*vd)
	s.b = grow(s.b, n*hv)
	s.a = grow(s.a, n*hv)
	s.o = grow(s.o, n*vd)
	if err := mul(dn.qkv, &s.in, s.qkv, n); err != nil {
		return err
	}
	if err := mul(dn.gate, &s.in, s.z, n); err != nil {
		return err
	}
	if dn.ba.Linear != nil {
		// qwen3next: per key head g, [b of heads g·r…g·r+r−1 | a of the same].
		s.ba = grow(s.ba, n*2*hv)
		if err := mul(dn.ba, &s.in, s.ba, n); err != nil {
			return err
		}
		r := hv / m.hk
		for t := range n {
			for g := range m.hk {
				src := s.ba[t*2*hv+g*2*r:]
				copy(s.b[t*hv+g*r:t*hv+(g+1)*r], src[:r])
				copy(s.a[t*hv+g*r:t*hv+(g+1)*r], src[r:2*r])
			}
		}
	} else {
		if err := mul(dn.beta, &s.in, s.b, n); err != nil {
			return err
		}
		if err := mul(dn.alpha, &s.in, s.a, n); err != nil {
			return err
		}
	}
	// β = sigmoid(b); g = softplus(a + dt)·ssm_a (≤ 0: the log of the decay).
	ops.Sigmoid(s.b, s.b)
	for t := range n {
		a := s.a[t*hv : (t+1)*hv]
		ops.Add(a, a, dn.dt)
		ops.Softplus(a, a)
		ops.Mul(a, a, dn.a)
	}

	r0 := 0
	for _, step := range steps {
		st := step.State.(*state)
		nt := len(step.Tokens)
		m.convolve(dn.conv, st.conv[l.rec], s.qkv[r0*c:(r0+nt)*c], s.conv[r0*c:(r0+nt)*c], nt, c)
		r0 += nt
	}
	scale := float32(1 / math.Sqrt(float64(m.dk)))
	m.pool.For(n, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			row := s.conv[t*c : (t+1)*c]
			ops.SiLU(row, row)
			for h := range 2 * m.hk {
				ops.L2Norm(row[h*m.dk:(h+1)*m.dk], row[h*m.dk:(h+1)*m.dk], m.eps)
			}
			ops.Scale(row[:kd], scale)
		}
	})

	// One work item per (step, value head); the rows of a step are
	// contiguous in every buffer.
	starts := make([]int, len(steps)+1)
	for i, step := range steps {
		starts[i+1] = starts[i] + len(step.Tokens)
	}
	m.pool.For(len(steps)*hv, func(lo, hi int) {
		var cs *chunkScratch
		for w := lo; w < hi; w++ {
			si, j := w/hv, w%hv
			st := steps[si].State.(*state)
			t0, nt := starts[si], starts[si+1]-starts[si]
			S := st.ssm[l.rec][j*m.dv*m.dk : (j+1)*m.dv*m.dk]
			in := m.headInputs(j, t0, nt, c)
			if nt == 1 {
				recurrent(S, &in, m.dk, m.dv)
				continue
			}
			if cs == nil {
				cs = newChunkScratch(m.dk, m.dv)
			}
			chunked(S, &in, m.dk, m.dv, nt, cs)
		}
	})

	// Gated RMSNorm per value head: norm(o)·w · silu(z).
	dv := m.dv
	m.pool.For(n, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o := s.o[t*vd : (t+1)*vd]
			z := s.z[t*vd : (t+1)*vd]
			for j := range hv {
				ops.RMSNorm(o[j*dv:(j+1)*dv], o[j*dv:(j+1)*dv], dn.norm, m.eps)
			}
			ops.SiLU(z, z)
			ops.Mul(o, o, z)
		}
	})
	s.mid.Permute = nil
	if m.groupedOut && dn.out.rotated && !m.grouped {
		s.mid.Permute = m.toGrouped
	}
	s.mid.Bind(m.rot, s.o, vd)
	return mul(dn.out, &s.mid, s.y, n)
}

// toGrouped reorders one row of value-head outputs from the tiled order of
// qwen35 GGUF files (head i·hk+g) to the grouped order of the original
// checkpoint (head g·r+i), in which a GDNVGrouped declaration keeps
// ssm_out's input columns.
func (m *Model) toGrouped(dst, src []float32) {
	r, dv := m.hv/m.hk, m.dv
	for i := range r {
		for g := range m.hk {
			copy(dst[(g*r+i)*dv:(g*r+i+1)*dv], src[(i*m.hk+g)*dv:(i*m.hk+g+1)*dv])
		}
	}
}

// convolve runs the causal depthwise convolution of nt rows of c channels
// (u, pre-convolution) into y, continuing from the window in state (the
// last K−1 rows before u, oldest first), and leaves the last K−1 rows in
// state. w is the GGUF [K, c] kernel: w[ch*K+K−1] multiplies the current
// token.
func (m *Model) convolve(w, state, u, y []float32, nt, c int) {
	K := m.convK
	m.pool.For(c, func(lo, hi int) {
		win := make([]float32, K-1+nt)
		for ch := lo; ch < hi; ch++ {
			for i := range K - 1 {
				win[i] = state[i*c+ch]
			}
			for t := range nt {
				win[K-1+t] = u[t*c+ch]
			}
			wk := w[ch*K : (ch+1)*K]
			for t := range nt {
				var acc float32
				for j, wj := range wk {
					acc += wj * win[t+j]
				}
				y[t*c+ch] = acc
			}
			for i := range K - 1 {
				state[i*c+ch] = win[nt+i]
			}
		}
	})
}

// headIn are the inputs of the delta rule for one value head over nt
// consecutive tokens: slices of the convolved rows (stride c) and of the
// gate buffers.
type headIn struct {
	conv       []float32 // rows of c channels
	c          int
	qOff, kOff int // offsets of the head's query and key in a row
	vOff       int
	beta, g    []float32 // stride hv
	hv, j      int
	out        []float32 // rows of vd
	vd         int
}

func (h *headIn) q(t int) []float32      { return h.conv[t*h.c+h.qOff:] }
func (h *headIn) k(t int) []float32      { return h.conv[t*h.c+h.kOff:] }
func (h *headIn) v(t int) []float32      { return h.conv[t*h.c+h.vOff:] }
func (h *headIn) o(t int) []float32      { return h.out[t*h.vd+h.j*(h.vd/h.hv):] }
func (h *headIn) bet(t int) float32      { return h.beta[t*h.hv+h.j] }
func (h *headIn) logDecay(t int) float32 { return h.g[t*h.hv+h.j] }

// headInputs locates value head j's inputs for tokens t0…t0+nt−1. In GGUF
// qwen35 files value head j reads key head j mod hk (the converter's tiled
// order); in qwen3next files key head j/r (grouped order).
func (m *Model) headInputs(j, t0, nt, c int) headIn {
	s := &m.scratch
	kh := j % m.hk
	if m.grouped {
		kh = j / (m.hv / m.hk)
	}
	kd, vd := m.hk*m.dk, m.hv*m.dv
	return headIn{
		conv: s.conv[t0*c : (t0+nt)*c], c: c,
		qOff: kh * m.dk, kOff: kd + kh*m.dk, vOff: 2*kd + j*m.dv,
		beta: s.b[t0*m.hv : (t0+nt)*m.hv], g: s.a[t0*m.hv : (t0+nt)*m.hv], hv: m.hv, j: j,
		out: s.o[t0*vd : (t0+nt)*vd], vd: vd,
	}
}

// recurrent runs the delta rule token by token. S holds dv rows of dk
// (row m is what value index m reads). Per token: decay S, read the memory
// at k, write β(v − memory) along k, read the output at q.
func recurrent(S []float32, in *headIn, dk, dv int) {
	nt := len(in.conv) / in.c
	for t := range nt {
		q, k, v := in.q(t)[:dk], in.k(t)[:dk], in.v(t)[:dv]
		o := in.o(t)[:dv]
		decay := float32(math.Exp(float64(in.logDecay(t))))
		beta := in.bet(t)
		for mi := range dv {
			row := S[mi*dk : (mi+1)*dk]
			ops.Scale(row, decay)
			d := beta * (v[mi] - ops.Dot(row, k))
			ops.Axpy(row, d, k)
			o[mi] = ops.Dot(row, q)
		}
	}
}

// chunkScratch is the working memory of chunked for one worker.
type chunkScratch struct {
	G    []float32 // cumulative log decay inside the chunk
	E    []float32 // e^G
	A, P []float32 // chunkLen × chunkLen
	U, W []float32 // chunkLen × dv, chunkLen × dk
}

func newChunkScratch(dk, dv int) *chunkScratch {
	return &chunkScratch{
		G: make([]float32, chunkLen),
		E: make([]float32, chunkLen),
		A: make([]float32, chunkLen*chunkLen),
		P: make([]float32, chunkLen*chunkLen),
		U: make([]float32, chunkLen*dv),
		W: make([]float32, chunkLen*dk),
	}
}

// chunked runs the delta rule over nt tokens in blocks of chunkLen with
// the WY representation: inside a block the rank-one updates are gathered
// by a unit lower-triangular solve, so the state is read and written once
// per block instead of once per token. With G the cumulative log decay and
// indices inside the block,
//
//	A[t][s] = β_t (k_t·k_s) e^(G_t−G_s)            (s < t)
//	U = (I+A)⁻¹ (β v),  W = (I+A)⁻¹ (β e^G k)
//	Vn_t = U_t − S W_t
//	o_t = e^(G_t) S q_t + Σ_{s≤t} (q_t·k_s) e^(G_t−G_s) Vn_s
//	S ← e^(G_last) S + Σ_t e^(G_last−G_t) Vn_t k_tᵀ
//
// which equals the recurrence up to rounding. Every exponent is ≤ 0.
func chunked(S []float32, in *headIn, dk, dv, nt int, cs *chunkScratch) {
	for c0 := 0; c0 < nt; c0 += chunkLen {
		cl := min(chunkLen, nt-c0)
		G, E, A, P, U, W := cs.G[:cl], cs.E[:cl], cs.A, cs.P, cs.U, cs.W
		var acc float32
		for t := range cl {
			acc += in.logDecay(c0 + t)
			G[t] = acc
			E[t] = float32(math.Exp(float64(acc)))
		}
		for t := range cl {
			kt, qt := in.k(c0 + t)[:dk], in.q(c0 + t)[:dk]
			bt := in.bet(c0 + t)
			for s := 0; s <= t; s++ {
				ks := in.k(c0 + s)[:dk]
				e := float32(math.Exp(float64(G[t] - G[s])))
				P[t*chunkLen+s] = ops.Dot(qt, ks) * e
				if s < t {
					A[t*chunkLen+s] = bt * ops.Dot(kt, ks) * e
				}
			}
			// Forward substitution row t of (I+A)·[U W] = [βv βe^G k].
			u := U[t*dv : (t+1)*dv]
			wv := W[t*dk : (t+1)*dk]
			vt := in.v(c0 + t)[:dv]
			for i := range u {
				u[i] = bt * vt[i]
			}
			eg := bt * E[t]
			for i := range wv {
				wv[i] = eg * kt[i]
			}
			for s := range t {
				a := A[t*chunkLen+s]
				ops.Axpy(u, -a, U[s*dv:(s+1)*dv])
				ops.Axpy(wv, -a, W[s*dk:(s+1)*dk])
			}
		}
		// Vn_t = U_t − S W_t (in place in U) and the inter-chunk part of
		// the output, e^(G_t) S q_t: one pass over the rows of S.
		for mi := range dv {
			row := S[mi*dk : (mi+1)*dk]
			for t := range cl {
				U[t*dv+mi] -= ops.Dot(row, W[t*dk:(t+1)*dk])
				in.o(c0 + t)[mi] = E[t] * ops.Dot(row, in.q(c0 + t)[:dk])
			}
		}
		// Intra-chunk part: o_t += Σ_{s≤t} P[t][s] Vn_s.
		for t := range cl {
			o := in.o(c0 + t)[:dv]
			for s := 0; s <= t; s++ {
				ops.Axpy(o, P[t*chunkLen+s], U[s*dv:(s+1)*dv])
			}
		}
		// State update.
		last := G[cl-1]
		el := float32(math.Exp(float64(last)))
		for t := range cl {
			G[t] = float32(math.Exp(float64(last - G[t])))
		}
		for mi := range dv {
			row := S[mi*dk : (mi+1)*dk]
			ops.Scale(row, el)
			for t := range cl {
				ops.Axpy(row, U[t*dv+mi]*G[t], in.k(c0 + t)[:dk])
			}
		}
	}
}
