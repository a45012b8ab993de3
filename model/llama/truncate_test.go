package llama_test

import (
	"testing"

	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama"
	"trit/quant"
)

// Truncating a state and continuing gives the logits of a fresh run over
// the kept prefix and the new tokens.
func TestTruncate(t *testing.T) {
	m := demoF32(t)
	vocab := m.Info().Vocab
	a := []int{72, 101, 108, 108, 111, 32, 119, 111, 114}
	b := []int{40, 41, 42}
	st, _ := m.NewState(32)
	if err := m.Forward([]model.Step{{State: st, Tokens: a}}); err != nil {
		t.Fatal(err)
	}
	if st.Truncate(len(a) + 1) {
		t.Error("Truncate past Pos succeeded")
	}
	if !st.Truncate(5) || st.Pos() != 5 {
		t.Fatalf("Truncate(5): pos %d", st.Pos())
	}
	got := make([]float32, vocab)
	if err := m.Forward([]model.Step{{State: st, Tokens: b, Logits: got}}); err != nil {
		t.Fatal(err)
	}
	fresh, _ := m.NewState(32)
	want := make([]float32, vocab)
	if err := m.Forward([]model.Step{{State: fresh, Tokens: append(append([]int{}, a[:5]...), b...), Logits: want}}); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("logit %d: %g after truncation, %g fresh", i, got[i], want[i])
		}
	}
}

// demoF32 loads the demo model with float32 caches, closed at the end of
// the test.
func demoF32(t *testing.T) model.Model {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromFile(f, model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
