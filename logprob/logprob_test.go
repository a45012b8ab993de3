package logprob

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"trit/internal/logitcmp"
)

// naive is the reference: every entry's log-probability, sorted by logit
// (lower id first on ties).
func naive(logits []float32) []Token {
	lp := logitcmp.LogSoftmax(logits)
	out := make([]Token, len(logits))
	for i, v := range lp {
		out[i] = Token{i, float32(v)}
	}
	slices.SortStableFunc(out, func(a, b Token) int {
		switch {
		case logits[a.ID] > logits[b.ID]:
			return -1
		case logits[a.ID] < logits[b.ID]:
			return 1
		}
		return 0
	})
	return out
}

func TestTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		vocab int
		n     int
		ties  bool
	}{
		{"one", 1, 1, false},
		{"few of many", 1000, 5, false},
		{"all", 64, 64, false},
		{"more than all", 10, 20, false},
		{"ties", 300, 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logits := make([]float32, tc.vocab)
			for i := range logits {
				logits[i] = float32(r.NormFloat64() * 4)
				if tc.ties {
					logits[i] = float32(r.IntN(5))
				}
			}
			want := naive(logits)[:min(tc.n, tc.vocab)]
			got := Top(nil, logits, tc.n, LogSumExp(logits))
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || math.Abs(float64(got[i].LogProb-want[i].LogProb)) > 1e-5 {
					t.Fatalf("entry %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestLogSumExpEdges(t *testing.T) {
	inf := float32(math.Inf(-1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name   string
		logits []float32
		want   float64
	}{
		{"empty", nil, math.Inf(-1)},
		{"all -inf", []float32{inf, inf}, math.Inf(-1)},
		{"nan ignored", []float32{0, nan, 0}, math.Log(2)},
		{"large", []float32{1000, 1000}, 1000 + math.Log(2)},
	} {
		if got := LogSumExp(tc.logits); got != tc.want && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := Top(nil, []float32{nan, 1}, 2, math.Log(math.E)); got[0].ID != 1 || !math.IsInf(float64(got[1].LogProb), -1) {
		t.Errorf("NaN must rank last as -Inf: %+v", got)
	}
}

func BenchmarkTop20(b *testing.B) {
	logits := make([]float32, 151936)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	var buf []Token
	for b.Loop() {
		buf = Top(buf, logits, 20, LogSumExp(logits))
	}
}
