package model

import "fmt"

// LogitsDump is the JSON layout of the reference logits in
// ../shared/testdata/reference, so trit's output compares with another
// runtime's token for token.
type LogitsDump struct {
	Mode   string      `json:"mode"`
	NVocab int         `json:"n_vocab"`
	IDs    []int       `json:"ids"`
	Logits [][]float32 `json:"logits"`
}

// ComputeLogits runs ids through m from an empty state, as one batch or one
// token at a time, and returns the logits after every position.
func ComputeLogits(m Model, ids []int, mode string) (*LogitsDump, error) {
	vocab := m.Info().Vocab
	st, err := m.NewState(len(ids))
	if err != nil {
		return nil, err
	}
	d := &LogitsDump{Mode: mode, NVocab: vocab, IDs: ids, Logits: make([][]float32, len(ids))}
	switch mode {
	case "batch":
		all := make([]float32, len(ids)*vocab)
		if err := m.Forward([]Step{{State: st, Tokens: ids, Logits: all, All: true}}); err != nil {
			return nil, err
		}
		for i := range ids {
			d.Logits[i] = all[i*vocab : (i+1)*vocab]
		}
	case "sequential":
		for i, id := range ids {
			d.Logits[i] = make([]float32, vocab)
			if err := m.Forward([]Step{{State: st, Tokens: []int{id}, Logits: d.Logits[i]}}); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown mode %q (batch or sequential)", mode)
	}
	return d, nil
}
