// Package grammar constrains generation to a formal language: a context-free
// grammar over bytes, written in llama.cpp's GBNF or derived from a JSON
// Schema, is matched incrementally against the generated tokens, and before
// each token every vocabulary entry that would leave the language is masked.
//
// The grammar works on bytes, not characters: character classes are
// compiled to their UTF-8 byte sequences, so a byte-level BPE token that
// ends in the middle of a character is judged by its bytes like any other.
// The recognizer is a pushdown automaton whose sets of stacks are interned
// into states with memoised transitions (a lazily built DFA over stack
// sets); the mask of a state is computed once, by walking a trie of the
// vocabulary, and cached.
package grammar

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the package.
var (
	// ErrTooComplex reports a grammar whose recognizer needs more states
	// or deeper stacks than the limits allow.
	ErrTooComplex = errors.New("grammar: the grammar needs too many recognizer states")
	// ErrDead reports that no token of the vocabulary can continue the
	// text under the grammar.
	ErrDead = errors.New("grammar: no token can continue the text")
)

// A SyntaxError is a GBNF text that does not parse.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("grammar: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// A RuleError is a grammar that parses but cannot be used: an undefined or
// left-recursive rule, or no root.
type RuleError struct {
	Rule string
	Msg  string
}

func (e *RuleError) Error() string { return fmt.Sprintf("grammar: rule %q: %s", e.Rule, e.Msg) }

// A Grammar is a compiled context-free grammar over bytes. It is immutable
// and safe for concurrent use; each generation matches it with its own
// Constraint (or Matcher).
type Grammar struct {
	names []string  // rule names, for errors
	rules [][][]sym // rule → alternatives → sequence of symbols
	sets  []byteSet // terminals
	root  int       // start rule
}

// A sym is a terminal (>= 0: an index into sets) or a rule reference
// (< 0: ^rule).
type sym int32

func ref(rule int) sym    { return sym(^rule) }
func (s sym) isRef() bool { return s < 0 }
func (s sym) rule() int   { return int(^s) }
func (s sym) set() int    { return int(s) }
func term(set int) sym    { return sym(set) }

// A byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (b *byteSet) add(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		b[c>>6] |= 1 << (c & 63)
	}
}

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// builder assembles a Grammar: rules by name, terminals deduplicated.
type builder struct {
	g        Grammar
	byName   map[string]int
	setIdx   map[byteSet]int
	defined  []bool
	firstUse map[int]string // where an undefined rule was first referenced
}

func newBuilder() *builder {
	return &builder{byName: map[string]int{}, setIdx: map[byteSet]int{}, firstUse: map[int]string{}}
}

// rule returns the id of the named rule, creating it undefined.
func (b *builder) rule(name string) int {
	if id, ok := b.byName[name]; ok {
		return id
	}
	id := len(b.g.rules)
	b.byName[name] = id
	b.g.names = append(b.g.names, name)
	b.g.rules = append(b.g.rules, nil)
	b.defined = append(b.defined, false)
	return id
}

// fresh returns a new rule named after base, for groups and repetitions.
func (b *builder) fresh(base string) int {
	for i := len(b.g.rules); ; i++ {
		name := fmt.Sprintf("%s-%d", base, i)
		if _, ok := b.byName[name]; !ok {
			return b.rule(name)
		}
	}
}

func (b *builder) define(id int, alts [][]sym) {
	b.g.rules[id] = alts
	b.defined[id] = true
}

func (b *builder) set(s byteSet) sym {
	if id, ok := b.setIdx[s]; ok {
		return term(id)
	}
	id := len(b.g.sets)
	b.g.sets = append(b.g.sets, s)
	b.setIdx[s] = id
	return term(id)
}

func (b *builder) byteSym(c byte) sym {
	var s byteSet
	s.add(c, c)
	return b.set(s)
}

// literal returns the byte terminals of s.
func (b *builder) literal(s string) []sym {
	out := make([]sym, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = b.byteSym(s[i])
	}
	return out
}

// class returns a symbol matching one character in the code point ranges
// (sorted, disjoint, surrogates excluded): a terminal for ASCII-only
// classes, else a rule over the UTF-8 byte sequences.
func (b *builder) class(base string, ranges []runeRange) sym {
	var ascii byteSet
	hasASCII := false
	var alts [][]sym
	for _, r := range ranges {
		for _, seq := range utf8Sequences(r.lo, r.hi) {
			if len(seq) == 1 {
				ascii.add(seq[0].lo, seq[0].hi)
				hasASCII = true
				continue
			}
			alt := make([]sym, len(seq))
			for i, br := range seq {
				var s byteSet
				s.add(br.lo, br.hi)
				alt[i] = b.set(s)
			}
			alts = append(alts, alt)
		}
	}
	if len(alts) == 0 {
		if !hasASCII {
			// An empty class matches nothing: a rule with no alternatives.
			id := b.fresh(base)
			b.define(id, nil)
			return ref(id)
		}
		return b.set(ascii)
	}
	if hasASCII {
		alts = append([][]sym{{b.set(ascii)}}, alts...)
	}
	id := b.fresh(base)
	b.define(id, alts)
	return ref(id)
}

// finish checks the rules and returns the grammar rooted at root.
func (b *builder) finish(root string) (*Grammar, error) {
	id, ok := b.byName[root]
	if !ok || !b.defined[id] {
		return nil, &RuleError{Rule: root, Msg: "the grammar has no root rule"}
	}
	for i, d := range b.defined {
		if !d {
			msg := "is used but never defined"
			if w := b.firstUse[i]; w != "" {
				msg += " (used in " + w + ")"
			}
			return nil, &RuleError{Rule: b.g.names[i], Msg: msg}
		}
	}
	b.g.root = id
	g := &b.g
	if err := g.checkLeftRecursion(); err != nil {
		return nil, err
	}
	return g, nil
}

// nullable returns which rules can match the empty string.
func (g *Grammar) nullable() []bool {
	n := make([]bool, len(g.rules))
	for changed := true; changed; {
		changed = false
		for r, alts := range g.rules {
			if n[r] {
				continue
			}
			for _, alt := range alts {
				if g.seqNullable(alt, n) {
					n[r], changed = true, true
					break
				}
			}
		}
	}
	return n
}

func (g *Grammar) seqNullable(seq []sym, n []bool) bool {
	for _, s := range seq {
		if !s.isRef() || !n[s.rule()] {
			return false
		}
	}
	return true
}

// checkLeftRecursion rejects rules that can reach themselves without
// consuming a byte: the recognizer would expand them forever.
func (g *Grammar) checkLeftRecursion() error {
	n := g.nullable()
	left := make([][]int, len(g.rules)) // rules reachable at the left edge
	for r, alts := range g.rules {
		for _, alt := range alts {
			for _, s := range alt {
				if !s.isRef() {
					break
				}
				left[r] = append(left[r], s.rule())
				if !n[s.rule()] {
					break
				}
			}
		}
	}
	const (
		unseen = iota
		active
		done
	)
	mark := make([]uint8, len(g.rules))
	var visit func(r int) int
	visit = func(r int) int {
		mark[r] = active
		for _, x := range left[r] {
			switch mark[x] {
			case active:
				return x
			case unseen:
				if c := visit(x); c >= 0 {
					return c
				}
			}
		}
		mark[r] = done
		return -1
	}
	for r := range g.rules {
		if mark[r] == unseen {
			if c := visit(r); c >= 0 {
				return &RuleError{Rule: g.baseName(c), Msg: "is left-recursive (it can reach itself without consuming input)"}
			}
		}
	}
	return nil
}

// baseName strips the suffix of a synthesized rule so errors name the
// rule the user wrote.
func (g *Grammar) baseName(r int) string {
	name := g.names[r]
	if i := strings.LastIndexByte(name, '-'); i > 0 && allDigits(name[i+1:]) {
		if _, ok := g.ruleByName(name[:i]); ok {
			return name[:i]
		}
	}
	return name
}

func (g *Grammar) ruleByName(name string) (int, bool) {
	for i, n := range g.names {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
