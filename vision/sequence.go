package vision

import (
	"fmt"

	"trit/model"
)

// Sequence is a decoder input of text tokens and image rows with their
// M-RoPE positions, laid out as llama.cpp's libmtmd lays it out: text
// tokens at [p, p, p, 0]; the rows of an image starting at p at
// [p, p + row, p + col, 0]; and after the image, text resumes at
// p + max(grid width, grid height).
type Sequence struct {
	model.Input
	Chunks []Chunk
	next   int      // rotary position of the next element
	hashes []uint64 // content hashes of the images, for Keys
}

// Text appends text tokens.
func (s *Sequence) Text(ids []int) {
	if len(ids) == 0 {
		return
	}
	s.Chunks = append(s.Chunks, Chunk{Type: "text", Start: len(s.Tokens), N: len(ids)})
	for _, id := range ids {
		s.Tokens = append(s.Tokens, id)
		s.Pos = append(s.Pos, model.TextPos(s.next))
		s.next++
	}
}

// Image appends the rows of an image.
func (s *Sequence) Image(e *Embeddings) error {
	if s.Dim != 0 && e.Dim != s.Dim {
		return fmt.Errorf("vision: image rows of %d after rows of %d", e.Dim, s.Dim)
	}
	s.Dim = e.Dim
	s.Chunks = append(s.Chunks, Chunk{Type: "image", Start: len(s.Tokens), N: e.N()})
	for i := range e.N() {
		s.Tokens = append(s.Tokens, model.EmbedToken)
		s.Pos = append(s.Pos, [4]int{s.next, s.next + i/e.GridX, s.next + i%e.GridX, 0})
	}
	s.Embeds = append(s.Embeds, e.Data...)
	s.next += max(e.GridX, e.GridY)
	return nil
}

// Next is the rotary position of the element that would follow.
func (s *Sequence) Next() int { return s.next }

// Logits runs the sequence through m from an empty state and returns the
// logits after every element: in mode "batch" each chunk is one forward
// pass (as llama.cpp's mtmd_helper_eval_chunks decodes), in "sequential"
// every element is its own.
func (s *Sequence) Logits(m model.Model, mode string) ([][]float32, error) {
	if s.Dim != 0 && s.Dim != m.Info().Hidden {
		return nil, fmt.Errorf("vision: image rows of %d for a model of hidden size %d", s.Dim, m.Info().Hidden)
	}
	vocab := m.Info().Vocab
	st, err := m.NewState(len(s.Tokens))
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(s.Tokens))
	run := func(lo, hi int) error {
		all := make([]float32, (hi-lo)*vocab)
		step := s.Step(st, lo, hi)
		step.Logits, step.All = all, true
		if err := m.Forward([]model.Step{step}); err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			out[i] = all[(i-lo)*vocab : (i-lo+1)*vocab]
		}
		return nil
	}
	switch mode {
	case "batch":
		for _, c := range s.Chunks {
			if err := run(c.Start, c.Start+c.N); err != nil {
				return nil, err
			}
		}
	case "sequential":
		for i := range s.Tokens {
			if err := run(i, i+1); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("vision: unknown mode %q (batch or sequential)", mode)
	}
	return out, nil
}
