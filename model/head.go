package model

import (
	"fmt"

	"trit/ops"
)

// CheckSteps validates a Forward batch: every state is the model's own
// (mine reports that), no two steps share one, each step has tokens within
// [0, vocab) that fit in its state's capacity. It returns the total number
// of tokens.
func CheckSteps(arch string, steps []Step, vocab int, mine func(State) bool) (int, error) {
	n := 0
	for i, st := range steps {
		if st.State == nil || !mine(st.State) {
			return 0, fmt.Errorf("%s: step %d: state of another model", arch, i)
		}
		for j := range i {
			if steps[j].State == st.State {
				return 0, fmt.Errorf("%s: steps %d and %d share a state", arch, j, i)
			}
		}
		if len(st.Tokens) == 0 {
			return 0, fmt.Errorf("%s: step %d: no tokens", arch, i)
		}
		if p := st.State.Pos(); p+len(st.Tokens) > st.State.Cap() {
			return 0, fmt.Errorf("%s: step %d: %d tokens past position %d exceed the context of %d", arch, i, len(st.Tokens), p, st.State.Cap())
		}
		for _, t := range st.Tokens {
			if (t < 0 || t >= vocab) && (t != EmbedToken || st.Embeds == nil) {
				return 0, fmt.Errorf("%s: step %d: token %d out of range [0,%d)", arch, i, t, vocab)
			}
		}
		if st.Pos != nil && len(st.Pos) != len(st.Tokens) {
			return 0, fmt.Errorf("%s: step %d: %d positions for %d tokens", arch, i, len(st.Pos), len(st.Tokens))
		}
		n += len(st.Tokens)
	}
	return n, nil
}

// Head applies the final RMSNorm and the output projection to the hidden
// rows x (one per token of the steps, in order) that the steps ask logits
// for, and writes them into each step's Logits. project computes n rows of
// vocab logits from n normed rows; normBuf and outBuf are scratch buffers,
// grown as needed.
func Head(steps []Step, x []float32, hidden, vocab int, norm []float32, eps float32,
	project func(dst, x []float32, n int) error, normBuf, outBuf *[]float32) error {
	var rows []int
	r := 0
	for i, st := range steps {
		nt := len(st.Tokens)
		if st.Logits != nil {
			want := vocab
			if st.All {
				want = nt * vocab
			}
			if len(st.Logits) < want {
				return fmt.Errorf("model: step %d: logits buffer holds %d floats, need %d", i, len(st.Logits), want)
			}
			if st.All {
				for j := range nt {
					rows = append(rows, r+j)
				}
			} else {
				rows = append(rows, r+nt-1)
			}
		}
		r += nt
	}
	if len(rows) == 0 {
		return nil
	}
	xn := growTo(normBuf, len(rows)*hidden)
	for i, row := range rows {
		ops.RMSNorm(xn[i*hidden:(i+1)*hidden], x[row*hidden:(row+1)*hidden], norm, eps)
	}
	lg := growTo(outBuf, len(rows)*vocab)
	if err := project(lg, xn, len(rows)); err != nil {
		return err
	}
	i := 0
	for _, st := range steps {
		if st.Logits == nil {
			continue
		}
		k := 1
		if st.All {
			k = len(st.Tokens)
		}
		copy(st.Logits[:k*vocab], lg[i*vocab:(i+k)*vocab])
		i += k
	}
	return nil
}

// CommonPrefix returns the length of the longest common prefix of two
// token sequences: how much of a cached sequence a new prompt can reuse.
func CommonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
