package model

import (
	"strings"
	"testing"
)

type fakeState struct{ pos, cap int }

func (s *fakeState) Pos() int                { return s.pos }
func (s *fakeState) Cap() int                { return s.cap }
func (s *fakeState) Reset()                  { s.pos = 0 }
func (s *fakeState) Bytes() map[string]int64 { return nil }
func (s *fakeState) Clone() State            { c := *s; return &c }
func (s *fakeState) Grow(int) error          { return nil }
func (s *fakeState) Truncate(n int) bool     { s.pos = n; return true }

type otherState struct{ fakeState }

func TestCheckSteps(t *testing.T) {
	mine := func(s State) bool { _, ok := s.(*fakeState); return ok }
	a, b := &fakeState{cap: 4}, &fakeState{pos: 3, cap: 4}
	tests := []struct {
		steps []Step
		n     int
		err   string
	}{
		{[]Step{{State: a, Tokens: []int{1, 2}}, {State: b, Tokens: []int{3}}}, 3, ""},
		{[]Step{{State: a, Tokens: []int{1}}, {State: a, Tokens: []int{2}}}, 0, "share a state"},
		{[]Step{{State: a}}, 0, "no tokens"},
		{[]Step{{State: b, Tokens: []int{1, 2}}}, 0, "exceed the context"},
		{[]Step{{State: a, Tokens: []int{10}}}, 0, "out of range"},
		{[]Step{{State: a, Tokens: []int{-1}}}, 0, "out of range"},
		{[]Step{{State: &otherState{}, Tokens: []int{1}}}, 0, "another model"},
		{[]Step{{Tokens: []int{1}}}, 0, "another model"},
	}
	for i, tt := range tests {
		n, err := CheckSteps("test", tt.steps, 10, mine)
		if tt.err == "" {
			if err != nil || n != tt.n {
				t.Errorf("%d: n %d, err %v; want %d, nil", i, n, err, tt.n)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%d: err %v, want one containing %q", i, err, tt.err)
		}
	}
}

func TestHeadRows(t *testing.T) {
	const hidden, vocab = 2, 3
	x := []float32{1, 1, 2, 2, 3, 3, 4, 4} // four token rows
	last := make([]float32, vocab)
	all := make([]float32, 3*vocab)
	steps := []Step{{Tokens: []int{0}, Logits: last}, {Tokens: []int{0, 0, 0}, Logits: all, All: true}}
	var seen []float32
	project := func(dst, xn []float32, n int) error {
		for i := range n {
			seen = append(seen, xn[i*hidden])
			for j := range vocab {
				dst[i*vocab+j] = float32(i*10 + j)
			}
		}
		return nil
	}
	var nb, ob []float32
	if err := Head(steps, x, hidden, vocab, nil, 0, project, &nb, &ob); err != nil {
		t.Fatal(err)
	}
	// RMSNorm of (k, k) is (1, 1): four rows reach the projection.
	if len(seen) != 4 {
		t.Fatalf("projected %d rows, want 4", len(seen))
	}
	if last[2] != 2 || all[0] != 10 || all[8] != 32 {
		t.Errorf("logits routed wrongly: last %v, all %v", last, all)
	}
	steps[0].Logits = make([]float32, 1)
	if err := Head(steps, x, hidden, vocab, nil, 0, project, &nb, &ob); err == nil {
		t.Error("a short logits buffer was accepted")
	}
}
