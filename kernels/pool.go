package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Pool is a persistent worker pool shared by all kernels: its goroutines
// live as long as the pool. A decode step makes hundreds of short parallel
// calls (one per matrix), so waking a parked goroutine for each would cost
// as much as the work: idle workers spin for a while on the job counter
// before they park, and the chunks of a job are taken from an atomic
// counter, so a worker that starts late takes fewer of them instead of
// holding everyone up. A Pool's methods may be called from one goroutine at
// a time; fn passed to For must not call back into the same pool.
type Pool struct {
	threads int
	workers []*worker
	gen     atomic.Uint64       // bumped for every job and at Close
	job     atomic.Pointer[job] // the current job; nil after Close
	wg      sync.WaitGroup      // tracks the workers, for Close
	scratch Acts                // MatMul's activations
	// invariant: every product takes the few-row path (SetBatchInvariant).
	invariant bool
}

type worker struct {
	wake     chan struct{} // buffered(1): a token wakes a parked worker
	sleeping atomic.Bool
}

// job is one For call: chunks of [0,n) handed out by next.
type job struct {
	fn      func(lo, hi int)
	n       int
	chunks  int
	next    atomic.Int64
	pending atomic.Int64 // chunks not yet finished
}

// spinLimit bounds how many times an idle worker polls for work before it
// parks (some tens of microseconds: longer than the gap between the
// matrix products of a decode step, shorter than anything a person notices).
const spinLimit = 1 << 15

// chunksPerThread splits a job finer than one chunk per thread, so that
// the chunks balance between threads that start at different times.
const chunksPerThread = 4

// NewPool starts a pool of threads workers (runtime.NumCPU() when threads
// <= 0). The calling goroutine counts as one of them.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	p := &Pool{threads: threads}
	p.job.Store(&job{}) // an empty job: nothing to take
	for range threads - 1 {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		p.wg.Add(1)
		go p.run(w)
	}
	return p
}

func (p *Pool) run(w *worker) {
	defer p.wg.Done()
	// Starting from generation 0, not from what gen reads now, makes a
	// worker that starts late still see Close.
	var seen uint64
	spins := 0
	for {
		g := p.gen.Load()
		if g != seen {
			seen, spins = g, 0
			j := p.job.Load()
			if j == nil {
				return
			}
			j.work()
			continue
		}
		if spins < spinLimit {
			spins++
			if spins%256 == 0 {
				runtime.Gosched()
			}
			continue
		}
		// Park. Publishing sleeping before re-reading gen, while the
		// dispatcher bumps gen before reading sleeping, means one of the
		// two sees the other: no wake-up is lost. A token left over from
		// an earlier job only makes the worker look again.
		w.sleeping.Store(true)
		if p.gen.Load() == seen {
			<-w.wake
		}
		w.sleeping.Store(false)
		spins = 0
	}
}

// work takes chunks of j until none is left.
func (j *job) work() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.chunks {
			return
		}
		j.fn(c*j.n/j.chunks, (c+1)*j.n/j.chunks)
		j.pending.Add(-1)
	}
}

// Threads returns the number of threads For uses.
func (p *Pool) Threads() int { return p.threads }

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	p.job.Store(nil)
	p.gen.Add(1)
	for _, w := range p.workers {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	p.wg.Wait()
}

// For runs fn over [0,n) split into contiguous chunks, in parallel, and
// returns when all are done.
func (p *Pool) For(n int, fn func(lo, hi int)) { p.forGrain(n, 1, fn) }

// forGrain is For with chunks of at least grain items, so tiny loops stay on
// the calling goroutine.
func (p *Pool) forGrain(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	chunks := min(p.threads*chunksPerThread, max(1, n/max(grain, 1)))
	if chunks == 1 || p.threads == 1 {
		fn(0, n)
		return
	}
	j := &job{fn: fn, n: n, chunks: chunks}
	j.pending.Store(int64(chunks))
	p.job.Store(j)
	p.gen.Add(1)
	for _, w := range p.workers {
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	j.work()
	for spins := 0; j.pending.Load() > 0; spins++ {
		if spins%64 == 63 {
			runtime.Gosched()
		}
	}
}
