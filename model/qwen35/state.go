package qwen35

import (
	"fmt"
	"slices"

	"trit/model"
	"trit/model/kvcache"
)

// state is one sequence: a KV cache per full-attention layer, whose size
// follows the context, and per Gated DeltaNet layer a convolution window
// and a delta-rule state of fixed size.
type state struct {
	kv   *kvcache.Cache
	rope model.RopeCursor
	// conv[i] holds the last convK−1 pre-convolution rows of layer i's
	// q|k|v channels, oldest first; ssm[i] holds hv matrices of dv rows ×
	// dk columns (row m is the state read by value index m).
	conv [][]float32
	ssm  [][]float32
}

func (s *state) Pos() int         { return s.kv.Len() }
func (s *state) Cap() int         { return s.kv.Limit() }
func (s *state) Grow(n int) error { return s.kv.Reserve(s.kv.Len() + n) }

// Reset empties the state. The KV cache is overwritten position by
// position, but the recurrent states are read before they are written, so
// they are zeroed.
func (s *state) Reset() {
	s.kv.Truncate(0)
	s.rope.Reset()
	for _, c := range s.conv {
		clear(c)
	}
	for _, c := range s.ssm {
		clear(c)
	}
}

func (s *state) Bytes() map[string]int64 {
	var rec int64
	for i := range s.conv {
		rec += int64(len(s.conv[i])+len(s.ssm[i])) * 4
	}
	return map[string]int64{"kv": s.kv.Bytes(), "recurrent": rec}
}

func (s *state) FillSynthetic(n int, seed uint64) error { return s.kv.FillSynthetic(n, seed) }

// Truncate can only keep everything or nothing: the recurrent state has
// folded every position in.
func (s *state) Truncate(n int) bool {
	switch n {
	case s.kv.Len():
		return true
	case 0:
		s.Reset()
		return true
	}
	return false
}

func (s *state) Clone() model.State {
	c := *s
	c.kv = s.kv.Fork()
	c.conv = make([][]float32, len(s.conv))
	c.ssm = make([][]float32, len(s.ssm))
	for i := range s.conv {
		c.conv[i] = slices.Clone(s.conv[i])
		c.ssm[i] = slices.Clone(s.ssm[i])
	}
	return &c
}

// NewState implements model.Model.
func (m *Model) NewState(ctx int) (model.State, error) {
	if ctx <= 0 {
		return nil, fmt.Errorf("qwen35: context size %d", ctx)
	}
	kv, err := kvcache.New(m.kvConfig, ctx)
	if err != nil {
		return nil, err
	}
	s := &state{kv: kv}
	c := 2*m.hk*m.dk + m.hv*m.dv
	s.conv = make([][]float32, m.nRec)
	s.ssm = make([][]float32, m.nRec)
	for i := range s.conv {
		s.conv[i] = make([]float32, (m.convK-1)*c)
		s.ssm[i] = make([]float32, m.hv*m.dv*m.dk)
	}
	return s, nil
}
