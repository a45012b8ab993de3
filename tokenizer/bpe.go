package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Both models merge adjacent symbols of a word, best pair first, until no
// pair merges: gpt2 ranks pairs by merge rule, llama by the score of the
// merged token. The pairs wait in a heap and the symbols form a linked
// list, so a word of n symbols costs O(n log n) even when it is long.

// symbol is a piece of the word being merged: bytes [start, end) of the
// word, token id (-1 when the piece is not a token) and list links.
type symbol struct {
	id         int32
	start, end int32
	prev, next int32
}

// candidate is a mergeable pair of neighbouring symbols. It is stale when
// either symbol changed or they stopped being neighbours after it was
// queued.
type candidate struct {
	key         float64 // lower merges first: rank, or minus score
	left, right int32
	lid, rid    int32 // symbol ids when queued
	merged      int32
}

// pairHeap is a binary min-heap on (key, left); ties go to the leftmost
// pair, as in llama.cpp and Hugging Face.
type pairHeap []candidate

func (h pairHeap) less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].left < h[j].left
}

func (h *pairHeap) push(c candidate) {
	*h = append(*h, c)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *pairHeap) pop() candidate {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// merger runs the merge loop; pair reports whether two neighbouring
// symbols merge, into which token and with what key.
type merger struct {
	syms []symbol
	heap pairHeap
	pair func(l, r *symbol) (merged int32, key float64, ok bool)
}

func (m *merger) try(l, r int32) {
	if l < 0 || r < 0 {
		return
	}
	a, b := &m.syms[l], &m.syms[r]
	if id, key, ok := m.pair(a, b); ok {
		m.heap.push(candidate{key: key, left: l, right: r, lid: a.id, rid: b.id, merged: id})
	}
}

// run merges until no queued pair is left; m.syms must already be linked.
func (m *merger) run() {
	for i := 0; i+1 < len(m.syms); i++ {
		m.try(int32(i), int32(i+1))
	}
	for len(m.heap) > 0 {
		c := m.heap.pop()
		a, b := &m.syms[c.left], &m.syms[c.right]
		if a.next != c.right || b.prev != c.left || a.id != c.lid || b.id != c.rid {
			continue
		}
		a.id = c.merged
		a.end = b.end
		a.next = b.next
		if b.next >= 0 {
			m.syms[b.next].prev = c.left
		}
		m.try(a.prev, c.left)
		m.try(c.left, a.next)
	}
}

// link appends a symbol for bytes [start, end) with the given id.
func (m *merger) link(id int32, start, end int) {
	i := int32(len(m.syms))
	next := i + 1
	m.syms = append(m.syms, symbol{id: id, start: int32(start), end: int32(end), prev: i - 1, next: next})
}

// finish marks the last symbol as the end of the list.
func (m *merger) finish() {
	if n := len(m.syms); n > 0 {
		m.syms[n-1].next = -1
	}
}

// maxCachedWord bounds the pre-tokens whose BPE result is cached, and
// maxCacheEntries the cache, which is dropped when full.
const (
	maxCachedWord   = 256
	maxCacheEntries = 1 << 16
)

// encodeByteLevel appends the ids of text (one raw fragment) for gpt2.
func (t *Tokenizer) encodeByteLevel(out []int, text string) []int {
	m := merger{pair: t.rankPair} // scratch shared by the words of text
	for i := 0; i < len(text); {
		j := t.scan(text, i)
		for _, id := range t.bpeWord(text[i:j], &m) {
			out = append(out, int(id))
		}
		i = j
	}
	return out
}

// bpeWord returns the ids of one pre-token for gpt2, using m as scratch.
func (t *Tokenizer) bpeWord(word string, m *merger) []int32 {
	if len(word) == 1 {
		if b := word[0]; t.byteTok[b] >= 0 {
			return t.byteTok[b : b+1 : b+1] // read-only, like cached results
		}
	}
	cacheable := len(word) <= maxCachedWord
	if cacheable {
		t.mu.Lock()
		ids, ok := t.cache[word]
		t.mu.Unlock()
		if ok {
			return ids
		}
	}
	m.syms, m.heap = m.syms[:0], m.heap[:0]
	for i := 0; i < len(word); i++ {
		m.link(t.byteTok[word[i]], i, i+1)
	}
	m.finish()
	m.run()
	ids := make([]int32, 0, len(m.syms)/2+1)
	for i := int32(0); i >= 0; i = m.syms[i].next {
		switch id := m.syms[i].id; {
		case id >= 0:
			ids = append(ids, id)
		case t.unk >= 0: // a byte missing from the alphabet
			ids = append(ids, int32(t.unk))
		}
	}
	if cacheable {
		t.mu.Lock()
		if len(t.cache) >= maxCacheEntries {
			clear(t.cache)
		}
		t.cache[strings.Clone(word)] = ids
		t.mu.Unlock()
	}
	return ids
}

func (t *Tokenizer) rankPair(l, r *symbol) (int32, float64, bool) {
	if l.id < 0 || r.id < 0 {
		return 0, 0, false
	}
	v, ok := t.merges[uint64(l.id)<<32|uint64(r.id)]
	if !ok {
		return 0, 0, false
	}
	return int32(uint32(v)), float64(v >> 32), true
}

// encodeLlama appends the ids of text (one raw fragment) for the llama
// model: spaces become "▁", the dummy prefix is added when prefix is set,
// and characters without a token fall back to byte tokens.
func (t *Tokenizer) encodeLlama(out []int, text string, prefix bool) []int {
	var sb strings.Builder
	sb.Grow(len(text) + 3)
	if prefix {
		sb.WriteString("▁")
	}
	for i := 0; i < len(text); {
		k := strings.IndexByte(text[i:], ' ')
		if k < 0 {
			sb.WriteString(text[i:])
			break
		}
		sb.WriteString(text[i : i+k])
		sb.WriteString("▁")
		i += k + 1
	}
	s := sb.String()

	m := merger{syms: make([]symbol, 0, len(s))}
	m.pair = func(l, r *symbol) (int32, float64, bool) {
		id, ok := t.ids[s[l.start:r.end]]
		if !ok {
			return 0, 0, false
		}
		score := float32(0)
		if t.scores != nil {
			score = t.scores[id]
		}
		return id, -float64(score), true
	}
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		id, ok := t.ids[s[i:i+w]]
		if !ok {
			id = -1
		}
		m.link(id, i, i+w)
		i += w
	}
	m.finish()
	m.run()
	if len(m.syms) == 0 {
		return out
	}
	for i := int32(0); i >= 0; i = m.syms[i].next {
		sym := &m.syms[i]
		if sym.id >= 0 {
			out = append(out, int(sym.id))
			continue
		}
		for b := sym.start; b < sym.end; b++ {
			if id := t.byteTok[s[b]]; id >= 0 {
				out = append(out, int(id))
			} else if t.unk >= 0 {
				out = append(out, t.unk)
				break
			}
		}
	}
	return out
}
