// Package sample picks the next token from a vector of logits, the way
// llama.cpp's default sampler chain does, and watches the generated text for
// stop strings.
//
// The chain runs in llama.cpp's default order: repetition penalties, top-k,
// top-p, min-p, temperature, then a draw from the remaining distribution with
// a seeded PRNG. Top-p and min-p therefore see the probabilities at
// temperature 1, exactly as in llama.cpp; temperature only reshapes the
// distribution among the tokens that survived the filters.
package sample

import (
	"math"
	"math/rand/v2"
)

// Params selects the filters of a Sampler. The zero value is greedy decoding
// with no penalties; DefaultParams returns the usual chat settings.
type Params struct {
	// Temperature divides the logits before the draw. Zero or less means
	// greedy decoding: the token with the highest (penalised) logit,
	// the lowest id on ties.
	Temperature float32
	// TopK keeps the K most likely tokens; zero or less disables it.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probabilities
	// add up to at least TopP. Values outside (0, 1) disable it.
	TopP float32
	// MinP drops tokens whose probability is below MinP times that of the
	// most likely token. Zero or less disables it.
	MinP float32

	// RepeatPenalty divides positive logits (and multiplies negative ones)
	// of tokens seen in the last RepeatLastN accepted tokens. 1 (and any
	// value <= 0) disables it.
	RepeatPenalty float32
	// RepeatLastN is how many of the most recently accepted tokens the
	// penalties look at: 0 disables all penalties (as in llama.cpp), -1
	// means every token accepted since the last Reset.
	RepeatLastN int
	// PresencePenalty is subtracted once from the logit of every token seen
	// in the window.
	PresencePenalty float32
	// FrequencyPenalty is subtracted from a token's logit once per
	// occurrence in the window.
	FrequencyPenalty float32

	// Seed initialises the PRNG: the same seed and the same logits give the
	// same tokens. Callers that want different runs pick a fresh seed.
	Seed uint64
}

// DefaultParams returns the usual settings for Qwen3-family chat:
// temperature 0.7, top-k 20, top-p 0.95, no min-p, penalties off (with
// llama.cpp's window of 64 ready for them), seed 0.
func DefaultParams() Params {
	return Params{
		Temperature:   0.7,
		TopK:          20,
		TopP:          0.95,
		RepeatPenalty: 1,
		RepeatLastN:   64,
	}
}

// A Sampler draws tokens from logits according to its Params. It is not safe
// for concurrent use; use one Sampler per sequence.
type Sampler struct {
	p   Params
	rng *rand.Rand
	pcg *rand.PCG

	// history holds the last RepeatLastN accepted tokens as a ring (or all of
	// them when RepeatLastN is -1); counts mirrors it.
	history []int
	next    int
	full    bool
	counts  map[int]int

	cands []candidate // reused between calls to avoid a vocab-sized allocation per token
}

// New returns a Sampler with the given parameters and an empty history.
func New(p Params) *Sampler {
	s := &Sampler{p: p, counts: make(map[int]int)}
	s.pcg = rand.NewPCG(p.Seed, pcgStream)
	s.rng = rand.New(s.pcg)
	return s
}

// pcgStream is the fixed second PCG seed word; only Params.Seed varies.
const pcgStream = 0x9e3779b97f4a7c15

// Params returns the parameters the Sampler was created with.
func (s *Sampler) Params() Params { return s.p }

// Reset forgets the accepted history and restarts the PRNG from the seed, so
// that a reset Sampler repeats its earlier draws.
func (s *Sampler) Reset() {
	s.history = s.history[:0]
	s.next = 0
	s.full = false
	clear(s.counts)
	s.pcg.Seed(s.p.Seed, pcgStream)
}

// Accept records token id (from the prompt or just generated) in the history
// the penalties look at. Sample does not call it: the caller accepts the
// tokens it keeps, as with llama.cpp's common_sampler_accept.
func (s *Sampler) Accept(id int) {
	n := s.p.RepeatLastN
	switch {
	case n == 0:
		return
	case n < 0:
		s.history = append(s.history, id)
		s.counts[id]++
		return
	}
	if !s.full {
		s.history = append(s.history, id)
		s.counts[id]++
		if len(s.history) == n {
			s.full = true
		}
		return
	}
	old := s.history[s.next]
	if c := s.counts[old] - 1; c > 0 {
		s.counts[old] = c
	} else {
		delete(s.counts, old)
	}
	s.history[s.next] = id
	s.counts[id]++
	s.next = (s.next + 1) % n
}

// Sample returns the id of the next token. It applies the penalties to
// logits in place, then the filters and the draw. NaN logits count as -Inf.
// It returns -1 when logits is empty.
func (s *Sampler) Sample(logits []float32) int {
	if len(logits) == 0 {
		return -1
	}
	s.penalize(logits)
	if s.p.Temperature <= 0 {
		return argmax(logits)
	}

	c, sorted := s.candidates(logits)
	if p := s.p.TopP; p > 0 && p < 1 {
		c = topP(c, sorted, float64(p))
	}
	if p := s.p.MinP; p > 0 {
		c = minP(c, float64(p))
	}
	return s.draw(c, s.p.Temperature)
}

// penalize applies llama.cpp's repetition, frequency and presence penalties
// to the tokens in the window. Ids outside logits are ignored.
func (s *Sampler) penalize(logits []float32) {
	rep := s.p.RepeatPenalty
	if rep <= 0 {
		rep = 1
	}
	if s.p.RepeatLastN == 0 || (rep == 1 && s.p.FrequencyPenalty == 0 && s.p.PresencePenalty == 0) {
		return
	}
	for id, n := range s.counts {
		if id < 0 || id >= len(logits) {
			continue
		}
		l := logits[id]
		if l <= 0 {
			l *= rep
		} else {
			l /= rep
		}
		logits[id] = l - float32(n)*s.p.FrequencyPenalty - s.p.PresencePenalty
	}
}

// argmax returns the index of the largest logit, the lowest on ties, ignoring
// NaN; it returns 0 when every logit is NaN.
func argmax(logits []float32) int {
	best, bv := 0, float32(math.Inf(-1))
	for i, v := range logits {
		if v > bv { // false for NaN
			best, bv = i, v
		}
	}
	return best
}

// draw samples one candidate after dividing the logits by temp. It falls back
// to the first most likely candidate when the weights do not form a
// distribution (every logit -Inf, or an overflow to Inf).
func (s *Sampler) draw(c []candidate, temp float32) int {
	bi := 0
	for i, x := range c {
		if better(x, c[bi]) {
			bi = i
		}
	}
	hi := c[bi].logit
	if math.IsInf(float64(hi), -1) {
		return int(c[bi].id)
	}
	var sum float64
	for i := range c {
		w := math.Exp(float64(c[i].logit-hi) / float64(temp))
		c[i].p = w
		sum += w
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return int(c[bi].id)
	}
	u := s.rng.Float64() * sum
	for _, x := range c {
		u -= x.p
		if u < 0 {
			return int(x.id)
		}
	}
	// Rounding can leave u a hair above zero after the last candidate: take
	// the last one with any weight.
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].p > 0 {
			return int(c[i].id)
		}
	}
	return int(c[bi].id)
}
