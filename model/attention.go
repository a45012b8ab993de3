package model

import (
	"math"

	"trit/kernels"
	"trit/ops"
)

// KV is the attention cache of one layer of one sequence: keys and values
// of every position, kvDim = kvHeads×headDim floats each.
type KV struct {
	K, V []float32
}

// NewKV allocates caches for n layers of capacity positions.
func NewKV(layers, capacity, kvDim int) []KV {
	kv := make([]KV, layers)
	for i := range kv {
		kv[i] = KV{K: make([]float32, capacity*kvDim), V: make([]float32, capacity*kvDim)}
	}
	return kv
}

// Attention describes a multi-head attention with grouped KV heads.
type Attention struct {
	Heads, KVHeads, HeadDim int
	Scale                   float32 // applied to q·k
}

// Attend computes causal attention for nTok consecutive query tokens of one
// sequence, the first at position pos0; the layer cache must already hold
// keys and values for positions 0..pos0+nTok-1. q holds nTok×Heads×HeadDim
// floats; out receives the same shape.
func (a *Attention) Attend(pool *kernels.Pool, out, q []float32, kv *KV, nTok, pos0 int) {
	hd := a.HeadDim
	kvDim := a.KVHeads * hd
	group := a.Heads / a.KVHeads
	work := nTok * a.Heads
	pool.For(work, func(lo, hi int) {
		scores := make([]float32, pos0+nTok)
		for w := lo; w < hi; w++ {
			t, h := w/a.Heads, w%a.Heads
			kh := h / group
			qv := q[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
			n := pos0 + t + 1
			s := scores[:n]
			for p := range n {
				s[p] = ops.Dot(qv, kv.K[p*kvDim+kh*hd:p*kvDim+(kh+1)*hd]) * a.Scale
			}
			ops.Softmax(s)
			o := out[(t*a.Heads+h)*hd : (t*a.Heads+h+1)*hd]
			clear(o)
			for p := range n {
				ops.Axpy(o, s[p], kv.V[p*kvDim+kh*hd:p*kvDim+(kh+1)*hd])
			}
		}
	})
}

// DefaultScale is 1/√headDim.
func DefaultScale(headDim int) float32 { return float32(1 / math.Sqrt(float64(headDim))) }
