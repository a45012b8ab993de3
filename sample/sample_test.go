package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var (
	inf = float32(math.Inf(1))
	nan = float32(math.NaN())
)

func ln(p float64) float32 { return float32(math.Log(p)) }

func TestGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		want   int
	}{
		{"single", []float32{-3}, 0},
		{"max in middle", []float32{1, 5, 2}, 1},
		{"tie takes lowest id", []float32{1, 7, 7, 3}, 1},
		{"negative", []float32{-5, -2, -9}, 1},
		{"nan ignored", []float32{nan, 0.5, 1, nan}, 2},
		{"all nan", []float32{nan, nan}, 0},
		{"all -inf", []float32{-inf, -inf, -inf}, 0},
		{"+inf wins", []float32{1, inf, 2}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, temp := range []float32{0, -1} {
				s := New(Params{Temperature: temp, TopK: 2, TopP: 0.5})
				if got := s.Sample(slices.Clone(tt.logits)); got != tt.want {
					t.Errorf("temperature %v: Sample = %d, want %d", temp, got, tt.want)
				}
			}
		})
	}
}

func TestSampleEmpty(t *testing.T) {
	for _, p := range []Params{{}, DefaultParams()} {
		if got := New(p).Sample(nil); got != -1 {
			t.Errorf("Sample(nil) with %+v = %d, want -1", p, got)
		}
	}
}

func TestPenalties(t *testing.T) {
	base := []float32{2, -1, 0.5, 3, 1}
	tests := []struct {
		name    string
		p       Params
		history []int
		want    []float32
	}{
		{
			name:    "repeat",
			p:       Params{RepeatPenalty: 2, RepeatLastN: 64},
			history: []int{0, 1, 1},
			want:    []float32{1, -2, 0.5, 3, 1},
		},
		{
			name:    "frequency and presence",
			p:       Params{RepeatPenalty: 1, RepeatLastN: 64, FrequencyPenalty: 0.5, PresencePenalty: 0.25},
			history: []int{0, 1, 1, 3},
			// 0: 2-0.5-0.25; 1: -1-1-0.25; 3: 3-0.5-0.25
			want: []float32{1.25, -2.25, 0.5, 2.25, 1},
		},
		{
			name:    "all three",
			p:       Params{RepeatPenalty: 2, RepeatLastN: 64, FrequencyPenalty: 0.5, PresencePenalty: 0.25},
			history: []int{1, 1, 4},
			// 1: -1*2 - 2*0.5 - 0.25; 4: 1/2 - 0.5 - 0.25
			want: []float32{2, -3.25, 0.5, 3, -0.25},
		},
		{
			name:    "window of two",
			p:       Params{RepeatPenalty: 2, RepeatLastN: 2},
			history: []int{0, 3, 3, 2, 3},
			want:    []float32{2, -1, 0.25, 1.5, 1},
		},
		{
			name:    "window of two, frequency counts only the window",
			p:       Params{RepeatPenalty: 1, RepeatLastN: 2, FrequencyPenalty: 1},
			history: []int{3, 3, 3, 0, 3},
			want:    []float32{1, -1, 0.5, 2, 1},
		},
		{
			name:    "unbounded window",
			p:       Params{RepeatPenalty: 1, RepeatLastN: -1, FrequencyPenalty: 1},
			history: []int{3, 3, 3, 0, 3},
			want:    []float32{1, -1, 0.5, -1, 1},
		},
		{
			name:    "window zero disables",
			p:       Params{RepeatPenalty: 2, RepeatLastN: 0, PresencePenalty: 5},
			history: []int{0, 1, 2},
			want:    base,
		},
		{
			name:    "penalty <= 0 means off",
			p:       Params{RepeatPenalty: -3, RepeatLastN: 8},
			history: []int{0, 1, 2},
			want:    base,
		},
		{
			name:    "out of range ids ignored",
			p:       Params{RepeatPenalty: 2, RepeatLastN: 8},
			history: []int{-1, 5, 99, 2},
			want:    []float32{2, -1, 0.25, 3, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.p)
			for _, id := range tt.history {
				s.Accept(id)
			}
			logits := slices.Clone(base)
			s.Sample(logits)
			if !slices.Equal(logits, tt.want) {
				t.Errorf("penalised logits = %v, want %v", logits, tt.want)
			}
		})
	}
}

func TestPenaltyChangesGreedyChoice(t *testing.T) {
	s := New(Params{RepeatPenalty: 1.5, RepeatLastN: 4})
	s.Accept(0)
	if got := s.Sample([]float32{3, 2.5}); got != 1 {
		t.Errorf("with token 0 penalised (3/1.5=2 < 2.5): got %d, want 1", got)
	}
	s.Reset()
	if got := s.Sample([]float32{3, 2.5}); got != 0 {
		t.Errorf("after Reset: got %d, want 0", got)
	}
}

// probs are the probabilities behind the filter tests: ln(p) logits give
// p exactly at temperature 1.
var probs = []float64{0.1, 0.5, 0.15, 0.25}

func probLogits() []float32 {
	l := make([]float32, len(probs))
	for i, p := range probs {
		l[i] = ln(p)
	}
	return l
}

func ids(c []candidate) []int {
	out := make([]int, len(c))
	for i, x := range c {
		out[i] = int(x.id)
	}
	return out
}

func TestFilters(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		want []int // surviving ids, best first
	}{
		{"nothing", Params{}, []int{1, 3, 2, 0}},
		{"top-k 1", Params{TopK: 1}, []int{1}},
		{"top-k 3", Params{TopK: 3}, []int{1, 3, 2}},
		{"top-k larger than vocab", Params{TopK: 9}, []int{1, 3, 2, 0}},
		{"top-p 0.4 keeps the crossing token", Params{TopP: 0.4}, []int{1}},
		{"top-p 0.7", Params{TopP: 0.7}, []int{1, 3}},
		{"top-p 0.8", Params{TopP: 0.8}, []int{1, 3, 2}},
		{"top-p 0.95", Params{TopP: 0.95}, []int{1, 3, 2, 0}},
		{"top-p 1 is off", Params{TopP: 1}, []int{1, 3, 2, 0}},
		{"top-p 0 is off", Params{TopP: 0}, []int{1, 3, 2, 0}},
		{"min-p 0.35 (>= 0.175)", Params{MinP: 0.35}, []int{1, 3}},
		{"min-p 0.25 (>= 0.125)", Params{MinP: 0.25}, []int{1, 3, 2}},
		{"min-p 1 keeps the best", Params{MinP: 1}, []int{1}},
		{"min-p above 1 is a no-op", Params{MinP: 3}, []int{1, 3, 2, 0}},
		{"top-k 3 then top-p 0.8 (renormalised: 0.556, 0.833)", Params{TopK: 3, TopP: 0.8}, []int{1, 3}},
		{"top-p 0.8 then min-p 0.4 (>= 0.2)", Params{TopP: 0.8, MinP: 0.4}, []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.p)
			c, sorted := s.candidates(probLogits())
			if p := tt.p.TopP; p > 0 && p < 1 {
				c = topP(c, sorted, float64(p))
			}
			if p := tt.p.MinP; p > 0 {
				c = minP(c, float64(p))
			}
			slices.SortFunc(c, cmpCandidates)
			if got := ids(c); !slices.Equal(got, tt.want) {
				t.Errorf("survivors = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDistribution checks the frequencies of many draws against
// hand-computed distributions after filtering and temperature.
func TestDistribution(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		want []float64 // by id
	}{
		{"temperature 1", Params{Temperature: 1}, probs},
		// top-p 0.8 keeps 0.5, 0.25, 0.15; renormalised by 0.9.
		{"top-p 0.8", Params{Temperature: 1, TopP: 0.8}, []float64{0, 0.5 / 0.9, 0.15 / 0.9, 0.25 / 0.9}},
		// Temperature 2 takes square roots: 0.7071, 0.5, 0.3873 (sum 1.5944).
		{"top-p 0.8, temperature 2", Params{Temperature: 2, TopP: 0.8}, []float64{0, 0.44348, 0.24291, 0.31360}},
		// Temperature 0.5 squares: 0.25, 0.0625 (sum 0.3125).
		{"top-k 2, temperature 0.5", Params{Temperature: 0.5, TopK: 2}, []float64{0, 0.8, 0, 0.2}},
		// min-p 0.25 keeps p >= 0.125.
		{"min-p 0.25", Params{Temperature: 1, MinP: 0.25}, []float64{0, 0.5 / 0.9, 0.15 / 0.9, 0.25 / 0.9}},
	}
	const draws = 40000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.Seed = 7
			s := New(tt.p)
			counts := make([]int, len(probs))
			logits := make([]float32, len(probs))
			for range draws {
				copy(logits, probLogits())
				counts[s.Sample(logits)]++
			}
			for id, want := range tt.want {
				got := float64(counts[id]) / draws
				// 5 standard deviations at most 0.0125; exactly zero where
				// the filter removed the token.
				if (want == 0 && counts[id] != 0) || math.Abs(got-want) > 0.0125 {
					t.Errorf("id %d: frequency %.4f, want %.4f", id, got, want)
				}
			}
		})
	}
}

func randomLogits(r *rand.Rand, n, distinct int) []float32 {
	l := make([]float32, n)
	for i := range l {
		// Few distinct values force many ties.
		l[i] = float32(r.IntN(distinct))/4 - 10
	}
	return l
}

func TestSeedReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := randomLogits(r, 1000, 1000)
	run := func(s *Sampler) []int {
		out := make([]int, 200)
		for i := range out {
			out[i] = s.Sample(slices.Clone(logits))
			s.Accept(out[i])
		}
		return out
	}
	p := Params{Temperature: 1.5, TopK: 50, TopP: 0.9, RepeatPenalty: 1.1, RepeatLastN: 16, Seed: 42}
	s := New(p)
	a := run(s)
	if b := run(New(p)); !slices.Equal(a, b) {
		t.Fatalf("same seed, different tokens:\n%v\n%v", a, b)
	}
	s.Reset()
	if b := run(s); !slices.Equal(a, b) {
		t.Fatalf("after Reset, different tokens:\n%v\n%v", a, b)
	}
	p.Seed = 43
	if b := run(New(p)); slices.Equal(a, b) {
		t.Fatalf("seeds 42 and 43 gave identical streams %v", a)
	}
}

// TestTopKMatchesSort checks the heap selection against a full sort on a
// large vocabulary with many ties.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	logits := randomLogits(r, 151936, 300)
	logits[77] = nan
	all := make([]candidate, len(logits))
	for i, v := range logits {
		all[i] = candidate{id: int32(i), logit: clean(v)}
	}
	slices.SortFunc(all, cmpCandidates)
	for _, k := range []int{1, 2, 20, 40, 1000} {
		c, sorted := New(Params{TopK: k}).candidates(logits)
		if !sorted {
			t.Fatalf("k=%d: candidates not reported sorted", k)
		}
		if got, want := ids(c), ids(all[:k]); !slices.Equal(got, want) {
			t.Errorf("k=%d: top-k ids %v, want %v", k, got[:min(k, 10)], want[:min(k, 10)])
		}
	}
}

// TestTopPUnsortedMatchesSorted checks the partial-selection path of top-p
// against the fully sorted path.
func TestTopPUnsortedMatchesSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 5, 63, 64, 65, 1000, 151936} {
		for _, distinct := range []int{3, 40, 100000} {
			logits := randomLogits(r, n, distinct)
			for _, p := range []float64{0.05, 0.5, 0.95, 0.999} {
				un, _ := New(Params{}).candidates(logits)
				got := ids(topP(un, false, p))
				sorted := make([]candidate, n)
				for i, v := range logits {
					sorted[i] = candidate{id: int32(i), logit: v}
				}
				slices.SortFunc(sorted, cmpCandidates)
				want := ids(topP(sorted, true, p))
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d distinct=%d p=%v: unsorted path kept %d ids, sorted %d", n, distinct, p, len(got), len(want))
				}
			}
		}
	}
}

func TestSelectBest(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{2, 17, 100, 5000} {
		for _, k := range []int{1, n / 3, n - 1} {
			c := make([]candidate, n)
			for i := range c {
				c[i] = candidate{id: int32(i), logit: float32(r.IntN(7))}
			}
			want := slices.Clone(c)
			slices.SortFunc(want, cmpCandidates)
			selectBest(c, k)
			got := slices.Clone(c[:k])
			slices.SortFunc(got, cmpCandidates)
			if !slices.Equal(ids(got), ids(want[:k])) {
				t.Errorf("n=%d k=%d: wrong selection", n, k)
			}
		}
	}
}

func TestDrawDegenerate(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		want   int
	}{
		{"all -inf", []float32{-inf, -inf, -inf}, 0},
		{"all nan", []float32{nan, nan}, 0},
		{"one finite", []float32{-inf, nan, 4, -inf}, 2},
		{"+inf dominates", []float32{0, inf, 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []Params{{Temperature: 1}, {Temperature: 0.8, TopP: 0.9}, {Temperature: 1, TopK: 2, MinP: 0.1}} {
				if got := New(p).Sample(slices.Clone(tt.logits)); got != tt.want {
					t.Errorf("%+v: Sample = %d, want %d", p, got, tt.want)
				}
			}
		})
	}
}

func TestDefaultParams(t *testing.T) {
	p := DefaultParams()
	want := Params{Temperature: 0.7, TopK: 20, TopP: 0.95, RepeatPenalty: 1, RepeatLastN: 64}
	if p != want {
		t.Errorf("DefaultParams() = %+v, want %+v", p, want)
	}
	if got := New(p).Params(); got != p {
		t.Errorf("Params() = %+v, want %+v", got, p)
	}
}

func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(10, 11))
	src := make([]float32, 151936)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 3)
	}
	for _, bc := range []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"default", DefaultParams()},
		{"topP0.95", Params{Temperature: 0.7, TopP: 0.95}},
		{"minP0.05", Params{Temperature: 0.7, MinP: 0.05}},
		{"full", Params{Temperature: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(bc.p)
			logits := make([]float32, len(src))
			for b.Loop() {
				copy(logits, src)
				s.Sample(logits)
			}
		})
	}
}

func ExampleSampler() {
	p := DefaultParams()
	p.Seed = 1
	s := New(p)
	prompt := []int{3, 1}
	for _, id := range prompt {
		s.Accept(id)
	}
	logits := []float32{0.5, 1, 9, 2}
	id := s.Sample(logits) // token 2 holds almost all of the mass
	s.Accept(id)
	fmt.Println(id)
	// Output: 2
}
