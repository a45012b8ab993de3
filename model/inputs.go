package model

import "fmt"

// EmbedToken marks, in Step.Tokens, an element whose input row comes from
// Step.Embeds instead of the token table.
const EmbedToken = -1

// Embed writes the input rows of the steps' tokens into x (one row of
// hidden floats per token, steps in order): row(t, dst) for token ids and
// the next row of the step's Embeds for each EmbedToken. It checks that
// every step's Embeds holds exactly the rows its tokens ask for.
func Embed(steps []Step, hidden int, x []float32, row func(tok int, dst []float32)) error {
	i := 0
	for si, st := range steps {
		e := 0
		for _, t := range st.Tokens {
			dst := x[i*hidden : (i+1)*hidden]
			i++
			if t != EmbedToken {
				row(t, dst)
				continue
			}
			if (e+1)*hidden > len(st.Embeds) {
				return fmt.Errorf("model: step %d: more embedding tokens than the %d floats of Embeds hold (rows of %d)", si, len(st.Embeds), hidden)
			}
			copy(dst, st.Embeds[e*hidden:(e+1)*hidden])
			e++
		}
		if e*hidden != len(st.Embeds) {
			return fmt.Errorf("model: step %d: Embeds holds %d floats, %d embedding tokens take %d", si, len(st.Embeds), e, e*hidden)
		}
	}
	return nil
}

// RopeCursor follows where a sequence's rotary positions stand relative to
// its length. They part after an image: its rows take fewer positions than
// elements (max(grid width, grid height) for a whole grid). A state embeds
// one for PlaceRope.
type RopeCursor struct {
	shift int // rotary position of the next text token minus the state length
}

// TextPos is the position ids of a text token at rotary position p.
func TextPos(p int) [4]int { return [4]int{p, p, p, 0} }

// Reset is the cursor of an empty sequence.
func (c *RopeCursor) Reset() { c.shift = 0 }

// Shifted reports whether positions and length have parted, so that a
// state truncated to fewer elements no longer knows its positions.
func (c *RopeCursor) Shifted() bool { return c.shift != 0 }

// PlaceRope sets the rotary position ids of seqs (the attention view of
// steps, from Attention.Seqs) where they are not the cache positions: a
// step's Pos, or text after an image, which continues from the last
// element's t + 1. cursor returns a state's RopeCursor, which PlaceRope
// advances past the step.
func PlaceRope(steps []Step, seqs []AttnSeq, cursor func(State) *RopeCursor) {
	for i, st := range steps {
		c := cursor(st.State)
		s := &seqs[i]
		switch {
		case st.Pos != nil:
			s.Rope = st.Pos
			c.shift = st.Pos[len(st.Pos)-1][0] + 1 - (s.Pos0 + s.NTok)
		case c.shift != 0:
			s.Rope = make([][4]int, s.NTok)
			for j := range s.Rope {
				s.Rope[j] = TextPos(s.Pos0 + c.shift + j)
			}
		default:
			s.Rope = nil
		}
	}
}

// Input is a sequence of token ids and embedding rows (where Tokens holds
// EmbedToken), with the rotary position ids of every element when they are
// not plain (nil Pos), cut into model steps by Step.
type Input struct {
	Tokens []int
	Pos    [][4]int
	Embeds []float32 // rows of Dim floats, one per EmbedToken, in order
	Dim    int
}

// Slice returns elements [lo, hi) of the input.
func (in *Input) Slice(lo, hi int) Input {
	e0 := 0
	for _, t := range in.Tokens[:lo] {
		if t == EmbedToken {
			e0++
		}
	}
	e1 := e0
	for _, t := range in.Tokens[lo:hi] {
		if t == EmbedToken {
			e1++
		}
	}
	out := Input{Tokens: in.Tokens[lo:hi], Dim: in.Dim}
	if in.Pos != nil {
		out.Pos = in.Pos[lo:hi]
	}
	if e1 > e0 {
		out.Embeds = in.Embeds[e0*in.Dim : e1*in.Dim]
	}
	return out
}

// Step returns the step for elements [lo, hi) of the input.
func (in *Input) Step(st State, lo, hi int) Step {
	s := in.Slice(lo, hi)
	return Step{State: st, Tokens: s.Tokens, Pos: s.Pos, Embeds: s.Embeds}
}
