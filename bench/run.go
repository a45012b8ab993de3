package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"time"

	"trit/model"
)

// Test is one kind of measurement, as in llama-bench: Prompt tokens
// processed in batches (pp), or Gen tokens generated one forward pass at a
// time (tg), after Depth tokens have been put in the cache (untimed).
// Exactly one of Prompt and Gen is positive.
type Test struct {
	Prompt, Gen, Depth int
}

// Name is llama-bench's name for the test: "pp512", "tg128", "tg128 @ d4096".
func (t Test) Name() string {
	s := fmt.Sprintf("pp%d", t.Prompt)
	if t.Gen > 0 {
		s = fmt.Sprintf("tg%d", t.Gen)
	}
	if t.Depth > 0 {
		s += fmt.Sprintf(" @ d%d", t.Depth)
	}
	return s
}

// tokens is the number of tokens the test timestamps.
func (t Test) tokens() int { return t.Prompt + t.Gen }

// Config controls how a test is run.
type Config struct {
	Reps  int // timed repetitions (default 5)
	Batch int // tokens per forward pass in pp and depth fill (default 512)
	// Ctx is the capacity of the state; 0 means just enough for the test
	// (Depth + Prompt + Gen). A larger Ctx measures the memory of that
	// context even where the test does not fill it.
	Ctx int
	// Seed makes the random prompt tokens reproducible.
	Seed uint64
	// NoWarmup skips the untimed warm-up run.
	NoWarmup bool
	// Synthetic fills the Depth positions with deterministic cache values
	// instead of running the model over them (model.SyntheticFiller).
	Synthetic bool
}

// Memory is what a test held: the process-wide resident-set high-water
// mark during the timed repetitions, and trit's own accounting.
type Memory struct {
	// PeakRSS is VmHWM from /proc/self/status, reset before the timed
	// repetitions (0 where unavailable). It includes the resident pages of
	// the memory-mapped weights.
	PeakRSS int64 `json:"peak_rss_bytes"`
	// PeakReset is false where the mark could not be reset: PeakRSS then
	// covers the whole process lifetime.
	PeakReset bool `json:"peak_rss_reset"`
	// Weights is the tensor data of the file (memory-mapped).
	Weights int64 `json:"weights_bytes"`
	// KV and Recurrent are what the state holds (State.Bytes).
	KV        int64 `json:"kv_bytes"`
	Recurrent int64 `json:"recurrent_bytes"`
	// Heap is the Go heap in use after the test; Scratch is the part not
	// counted in KV and Recurrent: activations, logits, kernel scratch.
	Heap    int64 `json:"heap_bytes"`
	Scratch int64 `json:"scratch_bytes"`
}

// Result is one test's measurement.
type Result struct {
	Test    Test
	Ctx     int             // the state's capacity
	Batch   int             // tokens per prefill forward pass
	Samples []time.Duration // one per repetition
	Memory  Memory
	// Synthetic is set when the depth was filled without the model.
	Synthetic bool
}

// Rates returns the tokens per second of each sample.
func (r *Result) Rates() []float64 {
	ts := make([]float64, len(r.Samples))
	for i, d := range r.Samples {
		ts[i] = float64(r.Test.tokens()) / d.Seconds()
	}
	return ts
}

// TokensPerSec returns the mean and sample standard deviation of the
// per-repetition rates, as llama-bench computes avg_ts and stddev_ts.
func (r *Result) TokensPerSec() (mean, sd float64) {
	return meanSD(r.Rates())
}

func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// ErrTest is wrapped by errors about a test that cannot run.
var ErrTest = errors.New("bench: bad test")

// Run measures test t on model m. Each repetition starts from an empty
// state (Reset), fills Depth tokens untimed, then times the test: for pp,
// Prompt random tokens in Batch-sized forward passes with logits for the
// last token; for tg, Gen forward passes of one token, each with logits.
func Run(m model.Model, t Test, c Config) (*Result, error) {
	if (t.Prompt > 0) == (t.Gen > 0) || t.Prompt < 0 || t.Gen < 0 || t.Depth < 0 {
		return nil, fmt.Errorf("%w: %+v: need exactly one of prompt and gen tokens", ErrTest, t)
	}
	need := t.Depth + t.tokens()
	c = c.defaults(need)
	if c.Ctx < need {
		return nil, fmt.Errorf("%w: %s needs a context of %d, have %d", ErrTest, t.Name(), need, c.Ctx)
	}
	info := m.Info()
	if err := checkMemory(m, c.Ctx); err != nil {
		return nil, err
	}
	st, err := m.NewState(c.Ctx)
	if err != nil {
		return nil, err
	}
	toks := randTokens(rand.New(rand.NewPCG(c.Seed, 0x7e57)), need, info.Vocab)
	depth, timed := toks[:t.Depth], toks[t.Depth:]
	logits := make([]float32, info.Vocab)
	r := &Result{Test: t, Ctx: c.Ctx, Batch: c.Batch, Synthetic: c.Synthetic && t.Depth > 0}
	fill := func(depth []int) error { return prefill(m, st, depth, c.Batch, nil) }
	if r.Synthetic {
		f, ok := st.(model.SyntheticFiller)
		if !ok {
			return nil, fmt.Errorf("%w: the %s state cannot be filled synthetically", ErrTest, info.Arch)
		}
		fill = func(depth []int) error { return f.FillSynthetic(len(depth), c.Seed) }
	}

	once := func(depth, timed []int) (time.Duration, error) {
		st.Reset()
		if err := fill(depth); err != nil {
			return 0, err
		}
		t0 := time.Now()
		if t.Prompt > 0 {
			err = prefill(m, st, timed, c.Batch, logits)
		} else {
			for i := range timed {
				if err = m.Forward([]model.Step{{State: st, Tokens: timed[i : i+1], Logits: logits}}); err != nil {
					break
				}
			}
		}
		return time.Since(t0), err
	}
	if !c.NoWarmup {
		// Like llama-bench: a whole prompt, or a single generated token,
		// on an empty cache. It faults the mapped weights in.
		w := timed
		if t.Gen > 0 {
			w = timed[:1]
		}
		if _, err := once(nil, w); err != nil {
			return nil, err
		}
	}
	// Start the high-water mark from here: memory freed by earlier tests
	// goes back to the system first.
	runtime.GC()
	debug.FreeOSMemory()
	reset := resetPeakRSS()
	for range c.Reps {
		d, err := once(depth, timed)
		if err != nil {
			return nil, err
		}
		r.Samples = append(r.Samples, d)
	}
	r.Memory = measure(info, st)
	r.Memory.PeakReset = reset
	return r, nil
}

// ErrMemory is wrapped by the error for a context whose state would not
// fit in the available memory.
var ErrMemory = errors.New("bench: state does not fit in memory")

// checkMemory refuses a context whose state would exceed the memory the
// system has available: touching it would swap or wake the OOM killer on
// a shared machine. The state's size is extrapolated from an empty
// state and the model's cache bytes per position: the KV cache grows with
// the context, the recurrent state does not.
func checkMemory(m model.Model, ctx int) error { return checkMemoryN(m, ctx, 1) }

// checkMemoryN is checkMemory for n states of ctx positions.
func checkMemoryN(m model.Model, ctx, n int) error {
	avail, err := MemAvailable()
	if err != nil {
		return nil // not Linux: nothing to check against
	}
	probe, err := m.NewState(1)
	if err != nil {
		return err
	}
	need := m.Info().KVTokenBytes * int64(ctx)
	for k, v := range probe.Bytes() {
		if k != "kv" {
			need += v
		}
	}
	need *= int64(n)
	if need > avail {
		return fmt.Errorf("%w: %d states of a context of %d need %.2f GiB, %.2f GiB available",
			ErrMemory, n, ctx, float64(need)/(1<<30), float64(avail)/(1<<30))
	}
	return nil
}

// randTokens returns n tokens below vocab drawn from rng.
func randTokens(rng *rand.Rand, n, vocab int) []int {
	toks := make([]int, n)
	for i := range toks {
		toks[i] = rng.IntN(vocab)
	}
	return toks
}

// prefill runs toks through m in forward passes of at most batch tokens;
// logits, if not nil, receives the last token's logits.
func prefill(m model.Model, st model.State, toks []int, batch int, logits []float32) error {
	for len(toks) > 0 {
		n := min(batch, len(toks))
		s := model.Step{State: st, Tokens: toks[:n]}
		if n == len(toks) {
			s.Logits = logits
		}
		if err := m.Forward([]model.Step{s}); err != nil {
			return err
		}
		toks = toks[n:]
	}
	return nil
}

func measure(info *model.Info, st model.State) Memory {
	mem := Memory{Weights: info.WeightBytes}
	for k, v := range st.Bytes() {
		if k == "kv" {
			mem.KV += v
		} else {
			mem.Recurrent += v
		}
	}
	mem.PeakRSS, _ = PeakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mem.Heap = int64(ms.HeapInuse)
	mem.Scratch = max(0, mem.Heap-mem.KV-mem.Recurrent)
	return mem
}
