package grammar

import (
	"fmt"
	"strings"
)

// Reasoning tells a Constraint whether the output opens with a free
// reasoning block that the grammar does not cover.
type Reasoning int

const (
	// NoReasoning: the grammar applies from the first byte.
	NoReasoning Reasoning = iota
	// InReasoning: the prompt opened <think>, so the output is free text
	// until </think>, then the grammar applies (Qwen3.5 with thinking on).
	InReasoning
	// MaybeReasoning: the output may open with <think>…</think> (Qwen3
	// with thinking on); if it starts otherwise, the grammar applies from
	// the first byte.
	MaybeReasoning
)

// The reasoning tags of Qwen3 and Qwen3.5.
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// Options place the grammar within the output.
type Options struct {
	Reasoning Reasoning
	// Trigger, when set, leaves the output free until Trigger appears
	// (after any reasoning); the grammar applies to what follows it. It
	// is how tool calls with tool_choice "auto" are constrained once the
	// model opens a call.
	Trigger string
}

// maxLead bounds the whitespace allowed between free text and the
// grammar's first byte (Qwen writes "\n\n" after </think>).
const maxLead = 8

const spaces = " \t\n\r"

// A Constraint restricts one generation to a grammar. Before each token,
// Mask removes the tokens that cannot come next; after it, Accept records
// the token chosen. It is not safe for concurrent use.
type Constraint struct {
	v     *Vocab
	m     *machine
	start int32 // state at the grammar's first byte

	phase int
	waits []string // free text continues until each of these, in order
	think bool     // the current wait is </think>: the answer must still come
	buf   string   // MaybeReasoning: undecided output (whitespace, part of <think>)
	tail  string   // free text that may be the start of waits[0]
	state int32

	masks   map[int32]mask // per grammar state
	scratch []int32
	cands   []int32 // tokens holding the last byte of the final trigger
}

const (
	phaseMaybe = iota
	phaseFree
	phaseGrammar
)

// maxMasks bounds the masks a Constraint caches (each is vocab/8 bytes).
const maxMasks = 512

// NewConstraint returns a Constraint for one generation of g over v.
func (g *Grammar) NewConstraint(v *Vocab, o Options) (*Constraint, error) {
	lead := o.Reasoning != NoReasoning || o.Trigger != ""
	h := g
	if lead {
		h = g.withLead(maxLead)
	}
	c := &Constraint{v: v, m: newMachine(h), masks: map[int32]mask{}, scratch: make([]int32, v.deep+1)}
	c.start = c.m.start()
	if c.m.err != nil {
		return nil, c.m.err
	}
	if c.start < 0 {
		return nil, &RuleError{Rule: g.names[g.root], Msg: "matches no text"}
	}
	c.state = c.start
	if o.Reasoning != NoReasoning {
		c.waits = append(c.waits, ThinkClose)
	}
	if o.Trigger != "" {
		c.waits = append(c.waits, o.Trigger)
	}
	switch {
	case o.Reasoning == MaybeReasoning:
		c.phase = phaseMaybe
	case len(c.waits) > 0:
		c.phase = phaseFree
		c.think = o.Reasoning == InReasoning
	default:
		c.phase = phaseGrammar
	}
	if len(c.waits) > 0 {
		last := c.waits[len(c.waits)-1]
		b := last[len(last)-1]
		for id, p := range v.pieces {
			if strings.IndexByte(p, b) >= 0 {
				c.cands = append(c.cands, int32(id))
			}
		}
	}
	return c, nil
}

// withLead returns g with up to n whitespace bytes allowed before it.
func (g *Grammar) withLead(n int) *Grammar {
	b := &builder{g: Grammar{names: append([]string(nil), g.names...), rules: append([][][]sym(nil), g.rules...),
		sets: append([]byteSet(nil), g.sets...)}, byName: map[string]int{}, setIdx: map[byteSet]int{}}
	for i, name := range b.g.names {
		b.byName[name] = i
	}
	b.defined = make([]bool, len(b.g.rules))
	var ws byteSet
	for i := 0; i < len(spaces); i++ {
		ws.add(spaces[i], spaces[i])
	}
	w := b.set(ws)
	prev := -1
	for range n {
		id := b.fresh("lead")
		alt := []sym{w}
		if prev >= 0 {
			alt = append(alt, ref(prev))
		}
		b.define(id, [][]sym{alt, {}})
		prev = id
	}
	root := b.fresh("lead-root")
	b.define(root, [][]sym{{ref(prev), ref(g.root)}})
	b.g.root = root
	return &b.g
}

// Mask sets to -Inf the logits of the tokens that cannot come next. It
// fails with ErrDead when no token can, and with ErrTooComplex when the
// grammar outgrows the recognizer's limits.
func (c *Constraint) Mask(logits []float32) error {
	var allowed mask
	switch c.phase {
	case phaseGrammar:
		allowed = c.grammarMask(c.state, len(logits))
	case phaseMaybe:
		if len(c.waits) > 1 {
			return nil // free text until the trigger, reasoning or not
		}
		allowed = c.maybeMask(len(logits))
	case phaseFree:
		allowed = c.freeMask(logits)
		if allowed == nil {
			return nil
		}
	}
	if c.m.err != nil {
		return c.m.err
	}
	if allowed.count() == 0 {
		return ErrDead
	}
	allowed.apply(logits)
	return nil
}

// grammarMask returns the tokens allowed in grammar state s (cached).
func (c *Constraint) grammarMask(s int32, n int) mask {
	if m, ok := c.masks[s]; ok && len(m) == (n+63)/64 {
		return m
	}
	m := newMask(n)
	if s >= 0 {
		c.v.walk(c.m, s, m, c.scratch)
		if c.m.accepts(s) {
			for _, id := range c.v.eog {
				if id < n {
					m.set(id)
				}
			}
		}
	}
	if len(c.masks) >= maxMasks {
		clear(c.masks)
	}
	c.masks[s] = m
	return m
}

// maybeMask allows, before the output has decided whether it opens with
// <think>, the tokens that continue "<think>" and those the grammar takes.
func (c *Constraint) maybeMask(n int) mask {
	s := c.m.feed(c.start, c.buf)
	m := newMask(n)
	if s >= 0 {
		copy(m, c.grammarMask(s, n))
	}
	for id, p := range c.v.pieces {
		if id < n && p != "" && thinkPrefix(c.buf+p) {
			m.set(id)
		}
	}
	return m
}

// thinkPrefix reports whether s, after leading whitespace (maxLead bytes
// at most), is a part of <think> or starts with it.
func thinkPrefix(s string) bool {
	t := strings.TrimLeft(s, spaces)
	if t == "" {
		return len(s) <= maxLead
	}
	return strings.HasPrefix(ThinkOpen, t) || strings.HasPrefix(t, ThinkOpen)
}

// freeMask returns nil when every token may come (free text), else the
// allowed set: tokens that complete the last trigger are allowed only if
// the grammar takes the bytes after it, and end-of-generation tokens are
// barred inside reasoning, whose answer must still come.
func (c *Constraint) freeMask(logits []float32) mask {
	last := len(c.waits) == 1
	if !last && !c.think {
		return nil
	}
	n := len(logits)
	m := newMask(n)
	for i := range m {
		m[i] = ^uint64(0)
	}
	if c.think {
		for _, id := range c.v.eog {
			if id < n {
				m[id>>6] &^= 1 << (id & 63)
			}
		}
	}
	if last {
		w := c.waits[0]
		for _, id := range c.cands {
			if int(id) >= n {
				continue
			}
			s := c.tail + c.v.pieces[id]
			i := strings.Index(s, w)
			if i >= 0 && c.m.feed(c.start, s[i+len(w):]) < 0 {
				m[id>>6] &^= 1 << (id & 63)
			}
		}
	}
	return m
}

// Accept records the token chosen after Mask. End-of-generation tokens
// are taken as they are: the caller ends the generation.
func (c *Constraint) Accept(id int) error {
	if c.v.isEOG(id) {
		return nil
	}
	if err := c.write(c.v.Piece(id)); err != nil {
		return fmt.Errorf("%w (token %d, %q)", err, id, c.v.Piece(id))
	}
	return c.m.err
}

func (c *Constraint) write(p string) error {
	switch c.phase {
	case phaseMaybe:
		s := c.buf + p
		t := strings.TrimLeft(s, spaces)
		switch {
		case strings.HasPrefix(t, ThinkOpen):
			c.phase, c.think, c.buf = phaseFree, true, ""
			return c.write(t[len(ThinkOpen):])
		case thinkPrefix(s):
			c.buf = s
			return nil
		}
		// No reasoning: on to the trigger, if any, else the grammar.
		c.waits, c.buf = c.waits[1:], ""
		c.phase = phaseGrammar
		if len(c.waits) > 0 {
			c.phase = phaseFree
		}
		return c.write(s)
	case phaseFree:
		s := c.tail + p
		w := c.waits[0]
		i := strings.Index(s, w)
		if i < 0 {
			c.tail = s[max(0, len(s)-len(w)+1):] // enough to find w split across tokens
			return nil
		}
		c.waits, c.tail, c.think = c.waits[1:], "", false
		if len(c.waits) == 0 {
			c.phase = phaseGrammar
		}
		return c.write(s[i+len(w):])
	}
	c.state = c.m.feed(c.state, p)
	if c.state < 0 {
		return ErrDead
	}
	return nil
}

// Done reports whether the grammar is complete and nothing can extend it:
// the generation should end.
func (c *Constraint) Done() bool { return c.phase == phaseGrammar && c.m.complete(c.state) }
