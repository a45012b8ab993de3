package kernels

import (
	"runtime"
	"sync"
)

// Pool is a persistent worker pool shared by all kernels: its goroutines
// live as long as the pool, so a call costs a few channel operations, not a
// goroutine per row. A Pool's methods may be called from one goroutine at a
// time; fn passed to For must not call back into the same pool.
type Pool struct {
	threads int
	work    chan task
	wg      sync.WaitGroup // tracks the workers, for Close
	scratch Acts           // MatMul's activations
}

type task struct {
	fn     func(lo, hi int)
	lo, hi int
	done   *sync.WaitGroup
}

// NewPool starts a pool of threads workers (runtime.NumCPU() when threads
// <= 0). The calling goroutine counts as one of them.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	p := &Pool{threads: threads, work: make(chan task, threads)}
	for range threads - 1 {
		p.wg.Add(1)
		go p.worker()
	}
	return p
}

func (p *Pool) worker() {
	defer p.wg.Done()
	for t := range p.work {
		t.fn(t.lo, t.hi)
		t.done.Done()
	}
}

// Threads returns the number of threads For uses.
func (p *Pool) Threads() int { return p.threads }

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	close(p.work)
	p.wg.Wait()
}

// For runs fn over [0,n) split into at most Threads() contiguous chunks of
// near-equal size, in parallel, and returns when all are done.
func (p *Pool) For(n int, fn func(lo, hi int)) { p.forGrain(n, 1, fn) }

// forGrain is For with chunks of at least grain items, so tiny loops stay on
// the calling goroutine.
func (p *Pool) forGrain(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	t := min(p.threads, max(1, n/max(grain, 1)))
	if t == 1 {
		fn(0, n)
		return
	}
	var done sync.WaitGroup
	done.Add(t - 1)
	for i := 1; i < t; i++ {
		p.work <- task{fn: fn, lo: i * n / t, hi: (i + 1) * n / t, done: &done}
	}
	fn(0, n/t)
	done.Wait()
}
