package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"trit/engine"
	"trit/grammar"
	"trit/model"
	"trit/model/kvcache"
	"trit/sample"
	"trit/tokenizer"
)

// A job is one generation request. The handler goroutine creates it and
// reads its output; the scheduler goroutine runs it. The fields above mu
// belong to the scheduler once the job is submitted.
type job struct {
	ctx    context.Context
	prompt []int
	p      genParams
	// in is a prompt with images (nil for text), keys its elements for
	// the prefix cache (vision.Sequence.Keys).
	in   *model.Input
	keys []int

	slot     *slot
	fed      int // prompt tokens in the slot's state (reused or prefilled)
	cacheN   int // prompt tokens reused from the slot's cache
	next     int // sampled token to feed next
	smp      *sample.Sampler
	dec      *tokenizer.Decoder
	stop     *sample.StopMatcher
	con      *grammar.Constraint // nil without a grammar
	tokens   []int
	tSubmit  time.Time
	tAdmit   time.Time
	tPrefill time.Time // end of prefill
	tLast    time.Time // when the last token was sampled
	lpRow    []float32 // with logprobs: the logits before sampling changes them
	lpPrompt []float32 // with prompt logprobs: a prompt chunk's logits

	mu     sync.Mutex
	text   []byte // output not yet taken by the handler
	lps    []tokenLogprob
	done   bool
	res    result
	notify chan struct{} // capacity 1: "something new"
}

// result is how a job ended, with llama-server style timings.
type result struct {
	finish      string // "stop", "length", "cancelled"
	stopWord    string // the stop string that ended it, if one did
	err         error
	promptN     int // prompt tokens computed
	cacheN      int // prompt tokens reused from the cache
	promptTime  time.Duration
	predictedN  int
	predictTime time.Duration
}

func newJob(ctx context.Context, prompt []int, p genParams) *job {
	return &job{ctx: ctx, prompt: prompt, p: p, notify: make(chan struct{}, 1), tSubmit: time.Now()}
}

// cacheKeys are the prompt's elements as the prefix cache compares them.
func (j *job) cacheKeys() []int {
	if j.keys != nil {
		return j.keys
	}
	return j.prompt
}

// take returns the output produced since the last call, and whether the
// job has ended (then res is final).
func (j *job) take() (text string, done bool, res result) {
	j.mu.Lock()
	defer j.mu.Unlock()
	text = string(j.text)
	j.text = j.text[:0]
	return text, j.done, j.res
}

func (j *job) emit(s string) {
	if s == "" {
		return
	}
	j.mu.Lock()
	j.text = append(j.text, s...)
	j.mu.Unlock()
	j.signal()
}

func (j *job) signal() {
	select {
	case j.notify <- struct{}{}:
	default:
	}
}

// slot is one sequence of the model: a state and the tokens it holds.
type slot struct {
	id     int
	state  model.State
	cached []int // the tokens in state, in order
	logits []float32
	job    *job
}

// sched owns the model: one goroutine runs every Forward call, batching
// one step of each active job (a prompt chunk or one new token) per call.
type sched struct {
	eng    *engine.Engine
	eog    []int
	vocab  *grammar.Vocab // for grammar constraints
	batch  int
	slots  []*slot
	active []*job // in admission order
	m      *metrics

	mu       sync.Mutex
	waiting  []*job
	queueMax int
	closed   bool
	wake     chan struct{}
	quit     chan struct{}
	finished chan struct{}

	steps []model.Step
	sjobs []*job

	// Running estimates for interleaving prefill with decoding: the time
	// of a step of decoding tokens only, and the cost of a prompt token.
	decodeStep, promptToken time.Duration
}

// minPrefillChunk is the fewest prompt tokens a step carries while other
// jobs are decoding.
const minPrefillChunk = 16

// prefillCap returns how many prompt tokens a step may carry while jobs
// are decoding: enough that the step takes about twice a plain decode
// step, so running streams keep their pace (their time per output token
// at most triples) while a long prompt is admitted.
func (s *sched) prefillCap() int {
	if s.decodeStep <= 0 || s.promptToken <= 0 {
		return minPrefillChunk
	}
	return max(minPrefillChunk, int(2*s.decodeStep/s.promptToken))
}

// observe updates the step estimates with a step of dec decoding tokens
// and n prompt tokens that took d.
func (s *sched) observe(dec, n int, d time.Duration) {
	ema := func(old, v time.Duration) time.Duration {
		if old == 0 {
			return v
		}
		return (3*old + v) / 4
	}
	switch {
	case n == 0:
		s.decodeStep = ema(s.decodeStep, d)
	case d > s.decodeStep:
		s.promptToken = ema(s.promptToken, (d-s.decodeStep)/time.Duration(n))
	}
}

func newSched(eng *engine.Engine, parallel, ctx, queue int, m *metrics) (*sched, error) {
	s := &sched{eng: eng, eog: eng.EOG, batch: eng.Batch, queueMax: queue, m: m,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), finished: make(chan struct{})}
	if s.batch <= 0 {
		s.batch = 512
	}
	vocab := eng.Model.Info().Vocab
	for i := range parallel {
		st, err := eng.Model.NewState(ctx)
		if err != nil {
			return nil, err
		}
		s.slots = append(s.slots, &slot{id: i, state: st, logits: make([]float32, vocab)})
	}
	s.vocab = grammar.TokenizerVocab(eng.Tok, eng.EOG)
	m.slots.Store(int64(parallel))
	return s, nil
}

// submit queues j; it fails with ErrBusy when the queue is full and with
// ErrShutdown after stop.
func (s *sched) submit(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrShutdown
	}
	if len(s.waiting) >= s.queueMax {
		return ErrBusy
	}
	s.waiting = append(s.waiting, j)
	s.m.queued.Store(int64(len(s.waiting)))
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// stop makes the scheduler end every job with ErrShutdown and return; it
// waits for that.
func (s *sched) stop() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	s.mu.Unlock()
	<-s.finished
}

// run is the scheduler goroutine.
func (s *sched) run() {
	defer close(s.finished)
	for {
		select {
		case <-s.quit:
			s.abort()
			return
		default:
		}
		s.admit()
		if len(s.active) == 0 {
			select {
			case <-s.wake:
			case <-s.quit:
			}
			continue
		}
		s.step()
	}
}

// abort ends every job, waiting or running, with ErrShutdown.
func (s *sched) abort() {
	s.mu.Lock()
	w := s.waiting
	s.waiting = nil
	s.m.queued.Store(0)
	s.mu.Unlock()
	for _, j := range w {
		s.finish(j, "", ErrShutdown)
	}
	for _, j := range slices.Clone(s.active) {
		s.finish(j, "", ErrShutdown)
	}
}

// admit moves waiting jobs into free slots, dropping those whose client
// has gone. A job goes to the free slot holding the longest prefix of its
// prompt, so that a conversation's next turn only prefills its new tokens.
func (s *sched) admit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.waiting[:0]
	for _, j := range s.waiting {
		if j.ctx.Err() != nil {
			s.finish(j, "cancelled", nil)
			continue
		}
		sl, reuse := s.pick(j.cacheKeys())
		if sl == nil {
			kept = append(kept, j)
			continue
		}
		if j.p.promptLogprobs {
			reuse = 0 // every prompt position must be computed for its logits
			j.addLogprobs(tokenLogprob{id: j.prompt[0], none: true})
		}
		if reuse < len(sl.cached) {
			if !sl.state.Truncate(reuse) {
				sl.state.Reset()
				reuse = 0
			}
			sl.cached = sl.cached[:reuse]
		}
		sl.job, j.slot = j, sl
		j.fed, j.cacheN = reuse, reuse
		j.tAdmit = time.Now()
		j.smp = sample.New(j.p.sample)
		last := -1
		for _, t := range j.prompt {
			if t != model.EmbedToken {
				j.smp.Accept(t)
				last = t
			}
		}
		j.dec = s.eng.Tok.NewDecoderAfter(last)
		j.stop = sample.NewStopMatcher(j.p.stop...)
		if j.p.grammar != nil {
			c, err := j.p.grammar.NewConstraint(s.vocab, j.p.gopts)
			if err != nil {
				sl.job, j.slot = nil, nil
				s.finish(j, "", err)
				continue
			}
			j.con = c
		}
		s.active = append(s.active, j)
	}
	clear(s.waiting[len(kept):])
	s.waiting = kept
	s.m.queued.Store(int64(len(kept)))
	s.m.busy.Store(int64(len(s.active)))
}

// pick returns the free slot to use for prompt and how many of its cached
// tokens can stay: the longest common prefix of the cache and the prompt
// that the slot's state can be truncated to, short of the whole prompt,
// since at least one prompt token must run to produce logits.
func (s *sched) pick(prompt []int) (*slot, int) {
	var best *slot
	bestReuse := -1
	for _, sl := range s.slots {
		if sl.job != nil {
			continue
		}
		reuse := model.CommonPrefix(sl.cached, prompt[:len(prompt)-1])
		if reuse < len(sl.cached) && s.eng.Model.Info().Recurrent {
			reuse = 0 // a recurrent state cannot go back to the common prefix
		}
		if reuse > bestReuse || (reuse == bestReuse && len(sl.cached) < len(best.cached)) {
			best, bestReuse = sl, reuse
		}
	}
	return best, bestReuse
}

// step runs one Forward call over every active job and advances them.
func (s *sched) step() {
	steps, sjobs := s.steps[:0], s.sjobs[:0]
	budget := s.batch
	for _, j := range slices.Clone(s.active) {
		if j.ctx.Err() != nil {
			s.finish(j, "cancelled", nil)
		}
	}
	// Decoding jobs first: one token each keeps their latency flat while
	// long prompts are prefilled in chunks around them.
	for _, j := range s.active {
		if j.fed == len(j.prompt) && s.room(j, 1) {
			steps = append(steps, model.Step{State: j.slot.state, Tokens: []int{j.next}, Logits: j.slot.logits})
			sjobs = append(sjobs, j)
			budget--
		}
	}
	// Prompts always advance, even when decoding fills the batch, but in
	// chunks small enough not to stall the running streams.
	decoding := len(steps)
	budget = max(budget, 1)
	if decoding > 0 {
		budget = min(budget, s.prefillCap())
	}
	for _, j := range s.active {
		if j.fed == len(j.prompt) || budget <= 0 {
			continue
		}
		n := min(len(j.prompt)-j.fed, budget)
		if j.p.promptLogprobs {
			n = min(n, maxPromptLogprobRows) // bounds the logits buffer
		}
		if !s.room(j, n) {
			continue
		}
		st := model.Step{State: j.slot.state, Tokens: j.prompt[j.fed : j.fed+n]}
		if j.in != nil {
			st = j.in.Step(j.slot.state, j.fed, j.fed+n)
		}
		if j.fed+n == len(j.prompt) {
			st.Logits = j.slot.logits
		}
		if j.p.promptLogprobs {
			vocab := len(j.slot.logits)
			j.lpPrompt = slices.Grow(j.lpPrompt[:0], n*vocab)[:n*vocab]
			st.Logits, st.All = j.lpPrompt, true
		}
		steps = append(steps, st)
		sjobs = append(sjobs, j)
		budget -= n
	}
	s.steps, s.sjobs = steps, sjobs
	if len(steps) == 0 {
		// Every job waits for cache pages that none of them will free:
		// the youngest gives up, so that the others can go on.
		if len(s.active) > 0 {
			s.finish(s.active[len(s.active)-1], "", fmt.Errorf("%w: %d MiB in use", ErrKVBudget, s.kvUsed()>>20))
		}
		return
	}
	t0 := time.Now()
	err := s.forward(steps)
	d := time.Since(t0)
	s.m.observeStep(len(steps), d)
	prompt := 0
	for _, st := range steps[decoding:] {
		prompt += len(st.Tokens)
	}
	s.observe(decoding, prompt, d)
	s.m.kvUsed.Store(s.kvUsed())
	for i, j := range sjobs {
		sl := j.slot
		if err != nil {
			// The state may hold part of the batch: start it afresh.
			sl.state.Reset()
			sl.cached = sl.cached[:0]
			s.finish(j, "", err)
			continue
		}
		if j.fed < len(j.prompt) {
			sl.cached = append(sl.cached, j.cacheKeys()[j.fed:j.fed+len(steps[i].Tokens)]...)
		} else {
			sl.cached = append(sl.cached, steps[i].Tokens...)
		}
		if j.fed < len(j.prompt) {
			if j.p.promptLogprobs {
				s.promptLogprobs(j, len(steps[i].Tokens))
			}
			j.fed += len(steps[i].Tokens)
			if j.fed < len(j.prompt) {
				continue
			}
			j.tPrefill = time.Now()
		}
		s.advance(j)
	}
	clear(s.steps) // drop references to states and buffers between steps
}

// room reports whether j's state can take n more positions now. When the
// shared KV budget is exhausted it first frees the caches that idle slots
// keep for prefix reuse; a job that still gets no pages waits a step.
func (s *sched) room(j *job, n int) bool {
	err := j.slot.state.Grow(n)
	if errors.Is(err, kvcache.ErrBudget) {
		for _, sl := range s.slots {
			if sl.job == nil && len(sl.cached) > 0 {
				sl.state.Reset()
				sl.cached = sl.cached[:0]
			}
		}
		err = j.slot.state.Grow(n)
	}
	return err == nil
}

// kvUsed returns the bytes the slots' caches hold.
func (s *sched) kvUsed() int64 {
	var n int64
	for _, sl := range s.slots {
		n += sl.state.Bytes()["kv"]
	}
	return n
}

// forward runs the model, turning a panic into an error for this step's
// jobs so that one bad batch does not take the server down.
func (s *sched) forward(steps []model.Step) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("server: model panicked: %v", v)
		}
	}()
	return s.eng.Model.Forward(steps)
}

// advance samples the next token of j from its slot's logits and ends the
// job when it is complete. It mirrors engine.Generate step for step, so
// that a greedy request gives the same text as `trit run`.
func (s *sched) advance(j *job) {
	if j.ctx.Err() != nil {
		s.finish(j, "cancelled", nil)
		return
	}
	logits := j.slot.logits
	// The logprobs are those of the model's distribution, before the
	// grammar's mask (and the sampler's filters) change it.
	if j.p.logprobs {
		j.lpRow = append(j.lpRow[:0], logits...)
	}
	if j.con != nil {
		if err := j.con.Mask(logits); err != nil {
			s.finish(j, "", err)
			return
		}
	}
	id := j.smp.Sample(logits)
	j.smp.Accept(id)
	now := time.Now()
	if j.tLast.IsZero() {
		s.m.ttft.observe(now.Sub(j.tSubmit).Seconds())
	} else {
		s.m.tpot.observe(now.Sub(j.tLast).Seconds())
	}
	j.tLast = now
	if !j.p.ignoreEOG && slices.Contains(s.eog, id) {
		j.emit(j.stop.Flush())
		s.finish(j, "stop", nil)
		return
	}
	j.tokens = append(j.tokens, id)
	if j.p.logprobs {
		j.addLogprobs(newLogprob(j.lpRow, id, j.p.topLogprobs))
	}
	if j.con != nil {
		if err := j.con.Accept(id); err != nil {
			s.finish(j, "", err)
			return
		}
	}
	out, matched := j.stop.Write(j.dec.Add(id))
	j.emit(out)
	switch {
	case matched:
		s.finish(j, "stop", nil)
	case j.con != nil && j.con.Done():
		s.flush(j)
		s.finish(j, "stop", nil)
	case len(j.tokens) >= j.p.maxTokens || j.slot.state.Pos() >= j.slot.state.Cap():
		s.flush(j)
		s.finish(j, "length", nil)
	default:
		j.next = id
	}
}

// flush emits what the decoder and the stop matcher hold back.
func (s *sched) flush(j *job) {
	rest, _ := j.stop.Write(j.dec.Flush())
	j.emit(rest)
	j.emit(j.stop.Flush())
}

// finish ends j, frees its slot and records its numbers.
func (s *sched) finish(j *job, reason string, err error) {
	now := time.Now()
	r := result{finish: reason, err: err, cacheN: j.cacheN, predictedN: len(j.tokens)}
	if j.stop != nil {
		r.stopWord = j.stop.Matched()
	}
	if j.slot != nil {
		r.promptN = j.fed - j.cacheN
		if !j.tPrefill.IsZero() {
			r.promptTime = j.tPrefill.Sub(j.tAdmit)
			r.predictTime = now.Sub(j.tPrefill)
		} else {
			r.promptTime = now.Sub(j.tAdmit)
		}
		j.slot.job = nil
		j.slot = nil
		if i := slices.Index(s.active, j); i >= 0 {
			s.active = slices.Delete(s.active, i, i+1)
		}
		s.m.busy.Store(int64(len(s.active)))
	}
	s.m.observeJob(r)
	j.mu.Lock()
	j.done, j.res = true, r
	j.mu.Unlock()
	j.signal()
}

// promptLogprobs records the entries of the prompt chunk of n tokens just
// computed into j.lpPrompt: row r predicts prompt token fed+r+1. The last
// prompt row's logits are those the first token is sampled from.
func (s *sched) promptLogprobs(j *job, n int) {
	vocab := len(j.slot.logits)
	for r := range n {
		row := j.lpPrompt[r*vocab : (r+1)*vocab]
		if p := j.fed + r + 1; p < len(j.prompt) {
			j.addLogprobs(newLogprob(row, j.prompt[p], j.p.topLogprobs))
		} else {
			copy(j.slot.logits, row)
		}
	}
}
