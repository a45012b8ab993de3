package sample

import (
	"math"
	"math/bits"
	"slices"
)

// candidate is one token still in the running. p is scratch space for
// probabilities or weights.
type candidate struct {
	id    int32
	logit float32
	p     float64
}

// better is the strict total order of the chain: higher logit first, lower
// id on ties, so every result is deterministic.
func better(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

func cmpCandidates(a, b candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// candidates builds the candidate list from logits, applying top-k on the
// way. With top-k it keeps a k-entry heap instead of materialising the
// whole vocabulary, and returns the k survivors sorted best first
// (sorted = true); otherwise it returns every token in id order.
func (s *Sampler) candidates(logits []float32) (c []candidate, sorted bool) {
	n := len(logits)
	k := s.p.TopK
	if k <= 0 || k >= n {
		c = slices.Grow(s.cands[:0], n)[:n]
		for i, v := range logits {
			c[i] = candidate{id: int32(i), logit: clean(v)}
		}
		s.cands = c
		return c, false
	}

	// Min-heap on "better": the root is the worst of the k best so far.
	h := slices.Grow(s.cands[:0], k)[:k]
	for i := range k {
		h[i] = candidate{id: int32(i), logit: clean(logits[i])}
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for i := k; i < n; i++ {
		x := candidate{id: int32(i), logit: clean(logits[i])}
		if better(x, h[0]) {
			h[0] = x
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, cmpCandidates)
	s.cands = h
	return h, true
}

// clean maps NaN to -Inf so that a broken logit can never be chosen over a
// real one and comparisons stay a total order.
func clean(v float32) float32 {
	if v != v {
		return float32(math.Inf(-1))
	}
	return v
}

// siftDown restores the min-heap property (worst at the root) below i.
func siftDown(h []candidate, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l
		if r := l + 1; r < n && better(h[l], h[r]) {
			w = r
		}
		if !better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// topP keeps the shortest best-first prefix whose probability mass (at
// temperature 1) reaches p, the token that crosses p included. Unsorted
// input is ordered only as far as needed: the best m candidates are
// selected and sorted, doubling m until they hold mass p.
func topP(c []candidate, sorted bool, p float64) []candidate {
	hi := c[0].logit
	for _, x := range c[1:] {
		if x.logit > hi {
			hi = x.logit
		}
	}
	if math.IsInf(float64(hi), -1) {
		return c
	}
	var sum float64
	for _, x := range c {
		sum += math.Exp(float64(x.logit - hi))
	}
	target := p * sum

	done := 0 // c[:done] is sorted and holds the best done candidates
	if sorted {
		done = len(c)
	}
	var cum float64
	for i := 0; ; i++ {
		if i == done {
			m := min(len(c), max(2*done, 64))
			selectBest(c[done:], m-done)
			slices.SortFunc(c[done:m], cmpCandidates)
			done = m
		}
		cum += math.Exp(float64(c[i].logit - hi))
		if cum >= target || i+1 == len(c) {
			return c[:i+1]
		}
	}
}

// selectBest reorders c so that its k best candidates come first, in no
// particular order (quickselect). It falls back to sorting when the
// partitions keep coming out lopsided, so it never goes quadratic.
func selectBest(c []candidate, k int) {
	if k <= 0 || k >= len(c) {
		return
	}
	budget := 2 * bits.Len(uint(len(c)))
	lo, hi := 0, len(c) // the k-th best lies in c[lo:hi]
	for hi-lo > 16 {
		if budget == 0 {
			slices.SortFunc(c[lo:hi], cmpCandidates)
			return
		}
		budget--
		mid := lo + (hi-lo)/2
		// Median of three as the pivot, moved to hi-1.
		if better(c[mid], c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if better(c[hi-1], c[lo]) {
			c[hi-1], c[lo] = c[lo], c[hi-1]
		}
		if better(c[mid], c[hi-1]) {
			c[mid], c[hi-1] = c[hi-1], c[mid]
		}
		pivot := c[hi-1]
		j := lo
		for i := lo; i < hi-1; i++ {
			if better(c[i], pivot) {
				c[i], c[j] = c[j], c[i]
				j++
			}
		}
		c[j], c[hi-1] = c[hi-1], c[j]
		// c[lo:j] beat the pivot, c[j] is the pivot, c[j+1:hi] lose to it.
		switch {
		case k == j || k == j+1:
			return
		case k < j:
			hi = j
		default:
			lo = j + 1
		}
	}
	slices.SortFunc(c[lo:hi], cmpCandidates)
}

// minP drops candidates whose probability is below p times the best one's,
// i.e. whose logit is below max+ln(p). Like llama.cpp it leaves the list
// alone when that would drop everything (p > 1).
func minP(c []candidate, p float64) []candidate {
	hi := c[0].logit
	for _, x := range c[1:] {
		if x.logit > hi {
			hi = x.logit
		}
	}
	th := float64(hi) + math.Log(p)
	keep := 0
	for _, x := range c {
		if float64(x.logit) >= th {
			keep++
		}
	}
	if keep == 0 {
		return c
	}
	j := 0
	for _, x := range c {
		if float64(x.logit) >= th {
			c[j] = x
			j++
		}
	}
	return c[:j]
}
