package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"trit/model"
)

// BatchTest is a batched-decoding measurement in the style of
// llama-batched-bench: B independent sequences, each in its own state
// holding Depth tokens (untimed), generate Gen tokens together, in Gen
// forward passes of B one-token steps.
type BatchTest struct {
	B, Gen, Depth int
}

// Name is "tg32 B4", or "tg32 B4 @ d512".
func (t BatchTest) Name() string {
	s := fmt.Sprintf("tg%d B%d", t.Gen, t.B)
	if t.Depth > 0 {
		s += fmt.Sprintf(" @ d%d", t.Depth)
	}
	return s
}

// BatchResult is one batched test's measurement.
type BatchResult struct {
	Test    BatchTest
	Samples []time.Duration // one per repetition: the Gen passes
}

// Aggregate returns the mean and sample standard deviation of the tokens
// per second of all B sequences together, B·Gen per sample.
func (r *BatchResult) Aggregate() (mean, sd float64) {
	return meanSD(rates(r.Samples, r.Test.B*r.Test.Gen))
}

// PerSeq returns the mean and sample standard deviation of each
// sequence's tokens per second, Gen per sample.
func (r *BatchResult) PerSeq() (mean, sd float64) {
	return meanSD(rates(r.Samples, r.Test.Gen))
}

func rates(samples []time.Duration, tokens int) []float64 {
	ts := make([]float64, len(samples))
	for i, d := range samples {
		ts[i] = float64(tokens) / d.Seconds()
	}
	return ts
}

// RunBatch measures t on m. One state is filled to Depth with random
// tokens and cloned for the other sequences (speed does not depend on
// which tokens the caches hold); each repetition brings every state back
// to Depth and times Gen forward passes of B one-token steps, each step
// asking for its logits. c.Batch sizes the depth fill; c.Ctx, if larger
// than Depth+Gen, the states.
func RunBatch(m model.Model, t BatchTest, c Config) (*BatchResult, error) {
	if t.B <= 0 || t.Gen <= 0 || t.Depth < 0 {
		return nil, fmt.Errorf("%w: %s: need B ≥ 1 sequences and Gen ≥ 1 tokens", ErrTest, t.Name())
	}
	c = c.defaults(t.Depth + t.Gen)
	if c.Ctx < t.Depth+t.Gen {
		return nil, fmt.Errorf("%w: %s needs a context of %d, have %d", ErrTest, t.Name(), t.Depth+t.Gen, c.Ctx)
	}
	vocab := m.Info().Vocab
	seqs, err := newSeqs(m, t.B, t.Depth, c)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xba7c))
	toks := make([][]int, t.B)
	steps := make([]model.Step, t.B)
	for b := range steps {
		toks[b] = randTokens(rng, t.Gen, vocab)
		steps[b].Logits = make([]float32, vocab)
	}
	once := func(gen int) (time.Duration, error) {
		if err := seqs.restore(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for i := range gen {
			for b := range steps {
				steps[b].State, steps[b].Tokens = seqs.states[b], toks[b][i:i+1]
			}
			if err := m.Forward(steps); err != nil {
				return 0, err
			}
		}
		return time.Since(t0), nil
	}
	if !c.NoWarmup {
		if _, err := once(1); err != nil {
			return nil, err
		}
	}
	r := &BatchResult{Test: t}
	for range c.Reps {
		d, err := once(t.Gen)
		if err != nil {
			return nil, err
		}
		r.Samples = append(r.Samples, d)
	}
	return r, nil
}

// VerifyTest measures what speculative decoding's verification costs: one
// forward step of K tokens of one sequence at Depth, with the logits of
// every token, against a step of one token.
type VerifyTest struct {
	K, Depth int
}

// Name is "verify k4", or "verify k4 @ d4096".
func (t VerifyTest) Name() string {
	s := fmt.Sprintf("verify k%d", t.K)
	if t.Depth > 0 {
		s += fmt.Sprintf(" @ d%d", t.Depth)
	}
	return s
}

// VerifyResult holds the step times, one of each kind per repetition,
// measured alternately.
type VerifyResult struct {
	Test     VerifyTest
	One, Kth []time.Duration // steps of 1 and of K tokens
}

// Ratio returns the median K-token step time over the median one-token
// step time.
func (r *VerifyResult) Ratio() float64 {
	return median(r.Kth).Seconds() / median(r.One).Seconds()
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// RunVerify measures t on m: per repetition, a step of one token and a
// step of K tokens, each from the state filled to Depth (brought back to
// it after each step; not timed).
func RunVerify(m model.Model, t VerifyTest, c Config) (*VerifyResult, error) {
	if t.K <= 0 || t.Depth < 0 {
		return nil, fmt.Errorf("%w: %s: need K ≥ 1 tokens", ErrTest, t.Name())
	}
	c = c.defaults(t.Depth + t.K)
	if c.Ctx < t.Depth+t.K {
		return nil, fmt.Errorf("%w: %s needs a context of %d, have %d", ErrTest, t.Name(), t.Depth+t.K, c.Ctx)
	}
	vocab := m.Info().Vocab
	seqs, err := newSeqs(m, 1, t.Depth, c)
	if err != nil {
		return nil, err
	}
	toks := randTokens(rand.New(rand.NewPCG(c.Seed, 0x5bec)), t.K, vocab)
	logits := make([]float32, t.K*vocab)
	step := func(k int) (time.Duration, error) {
		if err := seqs.restore(); err != nil {
			return 0, err
		}
		s := model.Step{State: seqs.states[0], Tokens: toks[:k], Logits: logits[:k*vocab], All: true}
		t0 := time.Now()
		err := m.Forward([]model.Step{s})
		return time.Since(t0), err
	}
	if !c.NoWarmup {
		if _, err := step(t.K); err != nil {
			return nil, err
		}
	}
	r := &VerifyResult{Test: t}
	for range c.Reps {
		one, err := step(1)
		if err != nil {
			return nil, err
		}
		kth, err := step(t.K)
		if err != nil {
			return nil, err
		}
		r.One, r.Kth = append(r.One, one), append(r.Kth, kth)
	}
	return r, nil
}

// defaults fills in c's defaults for a test that needs a state of need
// positions.
func (c Config) defaults(need int) Config {
	if c.Reps <= 0 {
		c.Reps = 5
	}
	if c.Batch <= 0 {
		c.Batch = 512
	}
	if c.Ctx == 0 {
		c.Ctx = need
	}
	return c
}

// seqs is the states of a batched test and a snapshot of each at the
// depth the test starts from.
type seqs struct {
	depth  int
	states []model.State
	snap   model.State // every state at depth, for those that cannot truncate
}

// newSeqs fills one state of c.Ctx positions to depth with random tokens
// and clones it into n states, after checking that n of them fit in
// memory.
func newSeqs(m model.Model, n, depth int, c Config) (*seqs, error) {
	if err := checkMemoryN(m, c.Ctx, n+1); err != nil {
		return nil, err
	}
	st, err := m.NewState(c.Ctx)
	if err != nil {
		return nil, err
	}
	fill := randTokens(rand.New(rand.NewPCG(c.Seed, 0xdee9)), depth, m.Info().Vocab)
	if err := prefill(m, st, fill, c.Batch, nil); err != nil {
		return nil, err
	}
	s := &seqs{depth: depth, snap: st, states: make([]model.State, n)}
	for i := range s.states {
		s.states[i] = st.Clone()
	}
	return s, nil
}

// restore brings every state back to the depth.
func (s *seqs) restore() error {
	for i, st := range s.states {
		if st.Pos() == s.depth {
			continue
		}
		if !st.Truncate(s.depth) {
			s.states[i] = s.snap.Clone()
		}
		if s.states[i].Pos() != s.depth {
			return fmt.Errorf("bench: state at %d positions after restoring to %d", s.states[i].Pos(), s.depth)
		}
	}
	return nil
}
