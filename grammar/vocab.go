package grammar

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"

	"trit/tokenizer"
)

// A Vocab is a model's vocabulary prepared for masking: a trie of the
// tokens' bytes, laid out in preorder so that a mask is one pass over an
// array that skips every subtree the grammar rejects. It is immutable and
// safe for concurrent use.
type Vocab struct {
	pieces []string // bytes of each token; "" for tokens with no text
	eog    []int    // end-of-generation tokens

	// trie, in preorder; node 0 is the root
	nodes []trieNode
	ids   []int32
	deep  int // depth of the deepest node
}

// maxPiece bounds the bytes of a token in the trie; longer tokens (no real
// vocabulary has them) are never allowed.
const maxPiece = 1 << 10

// A trieNode is one node of the vocabulary trie, packed so that the walk
// reads one array front to back.
type trieNode struct {
	edge  byte   // byte on the edge into the node
	depth uint16 // depth of the node (root 0)
	skip  int32  // the node after its subtree
	first int32  // tokens ending at the node: ids[first:next node's first]
}

// NewVocab prepares a vocabulary: pieces[id] are the bytes token id stands
// for (raw bytes, as a tokenizer decodes a single token; "" for control
// tokens, which a grammar never allows), and eog are the tokens that end a
// generation, allowed exactly when the text is a complete sentence.
func NewVocab(pieces []string, eog []int) *Vocab {
	v := &Vocab{pieces: pieces, eog: slices.Clone(eog)}
	order := make([]int32, 0, len(pieces))
	for id, p := range pieces {
		if p != "" && len(p) <= maxPiece {
			order = append(order, int32(id))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(strings.Compare(pieces[a], pieces[b]), cmp.Compare(a, b))
	})
	v.nodes = append(v.nodes, trieNode{})
	prev := ""
	for _, id := range order {
		p := pieces[id]
		lcp := 0
		for lcp < len(p) && lcp < len(prev) && p[lcp] == prev[lcp] {
			lcp++
		}
		for i := lcp; i < len(p); i++ {
			v.nodes = append(v.nodes, trieNode{edge: p[i], depth: uint16(i + 1), first: int32(len(v.ids))})
		}
		v.ids = append(v.ids, id)
		v.deep = max(v.deep, len(p))
		prev = p
	}
	// A sentinel holds the end of the last node's tokens.
	v.nodes = append(v.nodes, trieNode{first: int32(len(v.ids))})
	n := len(v.nodes) - 1
	// skip is the first later node no deeper than the node.
	var open []int32
	for i := range n {
		for len(open) > 0 && v.nodes[open[len(open)-1]].depth >= v.nodes[i].depth {
			v.nodes[open[len(open)-1]].skip = int32(i)
			open = open[:len(open)-1]
		}
		open = append(open, int32(i))
	}
	for _, i := range open {
		v.nodes[i].skip = int32(n)
	}
	return v
}

// TokenizerVocab prepares the vocabulary of tok, with eog as the
// end-of-generation tokens: each token stands for the bytes it decodes to
// alone, and control tokens for nothing.
func TokenizerVocab(tok *tokenizer.Tokenizer, eog []int) *Vocab {
	pieces := make([]string, tok.VocabSize())
	for id := range pieces {
		if !tok.IsControl(id) {
			pieces[id] = tok.Decode([]int{id})
		}
	}
	return NewVocab(pieces, eog)
}

// Piece returns the bytes of token id.
func (v *Vocab) Piece(id int) string {
	if id < 0 || id >= len(v.pieces) {
		return ""
	}
	return v.pieces[id]
}

func (v *Vocab) isEOG(id int) bool { return slices.Contains(v.eog, id) }

// A mask is a set of token ids, one bit each.
type mask []uint64

func newMask(n int) mask { return make(mask, (n+63)/64) }

func (m mask) set(id int) { m[id>>6] |= 1 << (id & 63) }

func (m mask) has(id int) bool { return id>>6 < len(m) && m[id>>6]&(1<<(id&63)) != 0 }

func (m mask) count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// walk sets in out the tokens whose bytes machine m accepts from state s
// (s >= 0), scratch holding one state per trie depth.
func (v *Vocab) walk(m *machine, s int32, out mask, scratch []int32) {
	scratch[0] = s
	nodes := v.nodes
	n := int32(len(nodes) - 1)
	for i := int32(1); i < n; {
		nd := &nodes[i]
		from := scratch[nd.depth-1]
		t := m.trans[int(from)<<8|int(nd.edge)]
		if t == unknown {
			t = m.next(from, nd.edge)
		}
		if t < 0 {
			i = nd.skip
			continue
		}
		scratch[nd.depth] = t
		for _, id := range v.ids[nd.first:nodes[i+1].first] {
			out[id>>6] |= 1 << (id & 63)
		}
		i++
	}
}

// apply sets to -Inf every logit whose token is not in allowed.
func (allowed mask) apply(logits []float32) {
	inf := float32(math.Inf(-1))
	for w := 0; w*64 < len(logits); w++ {
		var word uint64
		if w < len(allowed) {
			word = allowed[w]
		}
		if word == math.MaxUint64 {
			continue
		}
		row := logits[w*64 : min(len(logits), w*64+64)]
		if word == 0 {
			for i := range row {
				row[i] = inf
			}
			continue
		}
		for i := range row {
			if word&(1<<i) == 0 {
				row[i] = inf
			}
		}
	}
}
