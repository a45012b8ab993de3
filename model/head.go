package model

import (
	"fmt"

	"trit/kernels"
	"trit/ops"
)

// Head applies the final RMSNorm and the output matrix to the hidden rows x
// (one per token of the steps, in order) that the steps ask logits for, and
// writes them into each step's Logits. normBuf and outBuf are scratch
// buffers, grown as needed.
func Head(pool *kernels.Pool, steps []Step, x []float32, hidden int, norm []float32, eps float32, out *Linear, normBuf, outBuf *[]float32) error {
	vocab := out.Out()
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
	xn := growBuf(normBuf, len(rows)*hidden)
	for i, row := range rows {
		ops.RMSNorm(xn[i*hidden:(i+1)*hidden], x[row*hidden:(row+1)*hidden], norm, eps)
	}
	lg := growBuf(outBuf, len(rows)*vocab)
	out.Forward(lg, xn, len(rows))
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

func growBuf(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n)
	}
	*b = (*b)[:n]
	return *b
}
