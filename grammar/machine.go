package grammar

import (
	"math"
	"slices"
	"unsafe"
)

// Limits of one recognizer, so that a hostile grammar costs a generation
// at most some tens of MiB: states (each holds a 1 KiB transition row),
// stack nodes, and stack depth (nesting of rule references that are not
// tail calls).
const (
	maxStates = 1 << 15
	maxNodes  = 1 << 20
	maxDepth  = 1024
)

const (
	endMark   = sym(math.MinInt32) // end of an alternative in code
	dead      = int32(-1)          // the transition leaves the language
	unknown   = int32(-2)          // the transition is not computed yet
	rootStack = int32(0)           // the empty stack
)

// A machine recognizes a Grammar byte by byte. Its states are sets of
// pushdown stacks, interned, with transitions computed on first use: a DFA
// built lazily over the reachable part of the pushdown automaton. A stack
// is a chain of nodes (position in code, parent node); the top node points
// at a terminal, the others at the return positions of open rule
// references. A reference in tail position pushes nothing, so right
// recursion (and repetition) keeps the stacks flat.
type machine struct {
	g    *Grammar
	code []sym     // every alternative, each followed by endMark
	alts [][]int32 // rule → start positions of its alternatives

	nodes   []node
	depth   []int32
	nodeIdx map[node]int32

	states   []dstate
	stateIdx map[string]int32
	trans    []int32 // 256 per state
	err      error

	// scratch for one transition
	seen map[node]struct{}
	out  []int32
	acc  bool
	key  []byte
}

type node struct{ pos, parent int32 }

type dstate struct {
	stacks []int32 // top nodes, sorted
	accept bool    // an empty stack: the text so far is a sentence
}

func newMachine(g *Grammar) *machine {
	m := &machine{g: g, nodeIdx: map[node]int32{}, stateIdx: map[string]int32{}, seen: map[node]struct{}{}}
	m.alts = make([][]int32, len(g.rules))
	for r, alts := range g.rules {
		for _, alt := range alts {
			m.alts[r] = append(m.alts[r], int32(len(m.code)))
			m.code = append(m.code, alt...)
			m.code = append(m.code, endMark)
		}
	}
	m.nodes = append(m.nodes, node{-1, -1}) // rootStack
	m.depth = append(m.depth, 0)
	return m
}

// start returns the initial state, or dead when the grammar matches nothing.
func (m *machine) start() int32 {
	m.begin()
	for _, a := range m.alts[m.g.root] {
		m.expand(a, rootStack)
	}
	return m.intern()
}

func (m *machine) begin() {
	clear(m.seen)
	m.out = m.out[:0]
	m.acc = false
}

func (m *machine) node(pos, parent int32) int32 {
	n := node{pos, parent}
	if id, ok := m.nodeIdx[n]; ok {
		return id
	}
	if len(m.nodes) >= maxNodes {
		m.err = ErrTooComplex
		return -1
	}
	id := int32(len(m.nodes))
	m.nodes = append(m.nodes, n)
	m.depth = append(m.depth, m.depth[parent]+1)
	m.nodeIdx[n] = id
	return id
}

// expand adds to m.out the stacks reached from code position pos with the
// given parent without consuming a byte.
func (m *machine) expand(pos, parent int32) {
	k := node{pos, parent}
	if _, ok := m.seen[k]; ok {
		return
	}
	m.seen[k] = struct{}{}
	switch s := m.code[pos]; {
	case s == endMark:
		if parent == rootStack {
			m.acc = true
			return
		}
		p := m.nodes[parent]
		m.expand(p.pos, p.parent)
	case s.isRef():
		ret := parent
		if m.code[pos+1] != endMark {
			if m.depth[parent] >= maxDepth {
				return // too deep: this path is cut
			}
			if ret = m.node(pos+1, parent); ret < 0 {
				return
			}
		}
		for _, a := range m.alts[s.rule()] {
			m.expand(a, ret)
		}
	default:
		if id := m.node(pos, parent); id >= 0 {
			m.out = append(m.out, id)
		}
	}
}

// intern returns the state of the stacks collected in m.out.
func (m *machine) intern() int32 {
	slices.Sort(m.out)
	m.out = slices.Compact(m.out)
	if len(m.out) == 0 && !m.acc {
		return dead
	}
	m.key = m.key[:0]
	if m.acc {
		m.key = append(m.key, 1)
	} else {
		m.key = append(m.key, 0)
	}
	m.key = append(m.key, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.out))), 4*len(m.out))...)
	if id, ok := m.stateIdx[string(m.key)]; ok {
		return id
	}
	if len(m.states) >= maxStates {
		m.err = ErrTooComplex
		return dead
	}
	id := int32(len(m.states))
	m.states = append(m.states, dstate{stacks: slices.Clone(m.out), accept: m.acc})
	m.stateIdx[string(m.key)] = id
	for range 256 {
		m.trans = append(m.trans, unknown)
	}
	return id
}

// next returns the state after byte c in state s, or dead.
func (m *machine) next(s int32, c byte) int32 {
	if t := m.trans[int(s)<<8|int(c)]; t != unknown {
		return t
	}
	m.begin()
	for _, id := range m.states[s].stacks {
		n := m.nodes[id]
		if m.g.sets[m.code[n.pos].set()].has(c) {
			m.expand(n.pos+1, n.parent)
		}
	}
	t := m.intern()
	m.trans[int(s)<<8|int(c)] = t
	return t
}

// feed returns the state after the bytes of text, or dead.
func (m *machine) feed(s int32, text string) int32 {
	for i := 0; i < len(text) && s >= 0; i++ {
		s = m.next(s, text[i])
	}
	return s
}

// complete reports whether state s is a whole sentence that nothing can
// extend.
func (m *machine) complete(s int32) bool {
	return s >= 0 && m.states[s].accept && len(m.states[s].stacks) == 0
}

func (m *machine) accepts(s int32) bool { return s >= 0 && m.states[s].accept }
