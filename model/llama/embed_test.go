package llama_test

import (
	"math/rand/v2"
	"testing"

	"trit/model"
	_ "trit/model/llama"
)

// TestEmbeddingRows: embedding rows and explicit positions on an attention
// model. A text-only step with Pos [p, p, p, 0] is the plain step; after a
// position jump, text without Pos continues from the jump (the logits equal
// those of the fully positioned sequence), the state refuses to truncate
// into positions it no longer knows, and Reset clears the jump.
func TestEmbeddingRows(t *testing.T) {
	m := demoF32(t)
	vocab, H := m.Info().Vocab, m.Info().Hidden
	rng := rand.New(rand.NewPCG(1, 2))
	row := make([]float32, 2*H)
	for i := range row {
		row[i] = rng.Float32() - 0.5
	}
	run := func(st model.State, s model.Step) []float32 {
		t.Helper()
		s.State, s.Logits = st, make([]float32, vocab)
		if err := m.Forward([]model.Step{s}); err != nil {
			t.Fatal(err)
		}
		return s.Logits
	}
	same := func(what string, a, b []float32) {
		t.Helper()
		for i := range a {
			if d := a[i] - b[i]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("%s: logit %d %g vs %g", what, i, a[i], b[i])
			}
		}
	}
	toks := []int{72, 101, 108}
	st1, _ := m.NewState(32)
	st2, _ := m.NewState(32)
	same("text with plain positions", run(st1, model.Step{Tokens: toks}),
		run(st2, model.Step{Tokens: toks, Pos: [][4]int{model.TextPos(0), model.TextPos(1), model.TextPos(2)}}))

	// Two embedding rows at one t, then a token three positions on.
	img := model.Step{Tokens: []int{72, model.EmbedToken, model.EmbedToken, 40}, Embeds: row,
		Pos: [][4]int{{0, 0, 0, 0}, {1, 1, 1, 0}, {1, 1, 2, 0}, {5, 5, 5, 0}}}
	full := model.Step{Tokens: append(append([]int{}, img.Tokens...), 41), Embeds: row, Pos: append(append([][4]int{}, img.Pos...), model.TextPos(6))}
	ref, _ := m.NewState(32)
	all := make([]float32, 5*vocab)
	full.State, full.Logits, full.All = ref, all, true
	if err := m.Forward([]model.Step{full}); err != nil {
		t.Fatal(err)
	}
	st, _ := m.NewState(32)
	run(st, img)
	same("text after the jump", run(st, model.Step{Tokens: []int{41}}), all[4*vocab:])
	if st.Truncate(2) {
		t.Error("Truncate into the shifted positions succeeded")
	}
	if !st.Truncate(st.Pos()) || !st.Truncate(0) {
		t.Fatal("Truncate to Pos or 0 refused")
	}
	fresh, _ := m.NewState(32)
	same("after Reset", run(st, model.Step{Tokens: toks}), run(fresh, model.Step{Tokens: toks}))
	bad := []model.Step{
		{Tokens: []int{model.EmbedToken}},                                      // no Embeds
		{Tokens: []int{model.EmbedToken}, Embeds: row},                         // rows for two, one asked
		{Tokens: []int{1, 2}, Pos: [][4]int{model.TextPos(0)}},                 // one position for two tokens
		{Tokens: []int{model.EmbedToken, model.EmbedToken}, Embeds: row[:H+1]}, // a partial row
	}
	for i, s := range bad {
		st, _ := m.NewState(32)
		s.State = st
		if err := m.Forward([]model.Step{s}); err == nil {
			t.Errorf("bad step %d accepted", i)
		}
	}
}
