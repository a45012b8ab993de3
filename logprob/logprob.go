// Package logprob turns logits into log-probabilities: the log-softmax
// normaliser and the most likely tokens, shared by `trit perplexity` and
// the server's logprobs so both report the same numbers.
package logprob

import (
	"math"
	"slices"
)

// Token is one entry of a distribution.
type Token struct {
	ID      int
	LogProb float32 // natural log of the probability
}

// LogSumExp returns log Σ exp(logits[i]) in float64, so that the
// log-probability of token i is logits[i] − LogSumExp(logits). NaN logits
// count as −Inf; it returns −Inf when every logit is −Inf or the slice is
// empty.
func LogSumExp(logits []float32) float64 {
	m := math.Inf(-1)
	for _, v := range logits {
		if float64(v) > m {
			m = float64(v)
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, v := range logits {
		if v == v { // not NaN
			s += math.Exp(float64(v) - m)
		}
	}
	return m + math.Log(s)
}

// Of returns the log-probability of logit v under normaliser lse (from
// LogSumExp), rounded to float32 the way every caller stores it, so that two
// computations of the same distribution compare equal bit for bit.
func Of(v float32, lse float64) float32 {
	if v != v {
		return float32(math.Inf(-1))
	}
	return float32(float64(v) - lse)
}

// better orders tokens by logit, the lower id first on ties, matching the
// sampler's and llama.cpp's argmax.
func better(ai int, av float32, bi int, bv float32) bool {
	return av > bv || (av == bv && ai < bi)
}

// Top returns the n most likely tokens of logits (all of them when n ≥
// len(logits)), best first, with their log-probabilities under lse. It
// appends to dst[:0] and keeps an n-entry heap, so asking for a few tokens
// of a large vocabulary costs one pass.
func Top(dst []Token, logits []float32, n int, lse float64) []Token {
	n = min(n, len(logits))
	if n <= 0 {
		return dst[:0]
	}
	clean := func(v float32) float32 {
		if v != v {
			return float32(math.Inf(-1))
		}
		return v
	}
	// h is a min-heap on "better" of logits (LogProb holds the logit until
	// the end): its root is the worst of the n best so far.
	h := slices.Grow(dst[:0], n)[:n]
	worse := func(i, j int) bool { return better(h[j].ID, h[j].LogProb, h[i].ID, h[i].LogProb) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			if r := l + 1; r < n && worse(r, l) {
				l = r
			}
			if !worse(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := range n {
		h[i] = Token{i, clean(logits[i])}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := n; i < len(logits); i++ {
		if v := clean(logits[i]); better(i, v, h[0].ID, h[0].LogProb) {
			h[0] = Token{i, v}
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b Token) int {
		switch {
		case a.ID == b.ID:
			return 0
		case better(a.ID, a.LogProb, b.ID, b.LogProb):
			return -1
		}
		return 1
	})
	for i := range h {
		h[i].LogProb = Of(h[i].LogProb, lse)
	}
	return h
}
