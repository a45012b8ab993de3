package server

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are the server's counters, written by the scheduler and the
// handlers and read by GET /metrics.
type metrics struct {
	slots, busy, queued atomic.Int64
	inFlight            atomic.Int64 // HTTP requests being handled

	mu          sync.Mutex
	promptN     int64
	promptTime  time.Duration
	predictedN  int64
	predictTime time.Duration
	requests    map[string]int64 // finished generations by finish reason
	steps       int64
	stepSeqs    int64
	stepTime    time.Duration

	// ttft and tpot are the time to first token (from submission) and the
	// time per output token after it, of every generation.
	ttft, tpot histogram
	// kvUsed and kvLimit are the KV cache bytes the slots hold and the
	// budget they draw from (0: unbounded).
	kvUsed, kvLimit atomic.Int64
	images          int64
	encodeTime      time.Duration
	// towerBytes reports the vision tower's resident weight bytes (nil:
	// no tower).
	towerBytes func() int64
}

// observeImage records an encoded image.
func (m *metrics) observeImage(d time.Duration) {
	m.mu.Lock()
	m.images++
	m.encodeTime += d
	m.mu.Unlock()
}

func newMetrics() *metrics {
	return &metrics{requests: map[string]int64{},
		ttft: newHistogram(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
		tpot: newHistogram(0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5)}
}

// histogram is a Prometheus histogram of seconds with fixed buckets.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []int64 // counts[i]: observations ≤ bounds[i] and > bounds[i-1]
	sum    float64
	n      int64
}

func newHistogram(bounds ...float64) histogram {
	return histogram{bounds: bounds, counts: make([]int64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

// write prints the histogram in the text exposition format, buckets
// cumulative.
func (h *histogram) write(w io.Writer, name, help string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, "# HELP trit_%s %s\n# TYPE trit_%s histogram\n", name, help, name)
	var c int64
	for i, b := range h.bounds {
		c += h.counts[i]
		fmt.Fprintf(w, "trit_%s_bucket{le=\"%g\"} %d\n", name, b, c)
	}
	fmt.Fprintf(w, "trit_%s_bucket{le=\"+Inf\"} %d\ntrit_%s_sum %g\ntrit_%s_count %d\n", name, h.n, name, h.sum, name, h.n)
}

// observeStep records one Forward call serving n sequences.
func (m *metrics) observeStep(n int, d time.Duration) {
	m.mu.Lock()
	m.steps++
	m.stepSeqs += int64(n)
	m.stepTime += d
	m.mu.Unlock()
}

// observeJob records a finished generation.
func (m *metrics) observeJob(r result) {
	reason := r.finish
	if r.err != nil {
		reason = "error"
	}
	m.mu.Lock()
	m.promptN += int64(r.promptN)
	m.promptTime += r.promptTime
	m.predictedN += int64(r.predictedN)
	m.predictTime += r.predictTime
	m.requests[reason]++
	m.mu.Unlock()
}

// write prints the metrics in the Prometheus text exposition format.
func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rate := func(n int64, d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return float64(n) / d.Seconds()
	}
	perStep := 0.0
	if m.steps > 0 {
		perStep = float64(m.stepSeqs) / float64(m.steps)
	}
	metric := func(name, typ, help string, v any) {
		fmt.Fprintf(w, "# HELP trit_%s %s\n# TYPE trit_%s %s\ntrit_%s %v\n", name, help, name, typ, name, v)
	}
	metric("prompt_tokens_total", "counter", "Prompt tokens processed (not counting reused cache).", m.promptN)
	metric("prompt_seconds_total", "counter", "Time spent on prompt processing.", m.promptTime.Seconds())
	metric("prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.", rate(m.promptN, m.promptTime))
	metric("tokens_predicted_total", "counter", "Generated tokens.", m.predictedN)
	metric("tokens_predicted_seconds_total", "counter", "Time spent generating.", m.predictTime.Seconds())
	metric("predicted_tokens_seconds", "gauge", "Average generation throughput per request in tokens/s.", rate(m.predictedN, m.predictTime))
	metric("decode_steps_total", "counter", "Batched forward passes.", m.steps)
	metric("busy_slots_per_decode", "gauge", "Average sequences per forward pass.", perStep)
	metric("slots", "gauge", "Generation slots (--parallel).", m.slots.Load())
	metric("requests_processing", "gauge", "Generations holding a slot.", m.busy.Load())
	metric("requests_deferred", "gauge", "Generations waiting in the queue.", m.queued.Load())
	metric("http_requests_in_flight", "gauge", "HTTP requests being served.", m.inFlight.Load())
	metric("kv_cache_bytes", "gauge", "KV cache bytes held by the slots.", m.kvUsed.Load())
	metric("kv_cache_budget_bytes", "gauge", "The KV cache budget shared by the slots (0: unbounded).", m.kvLimit.Load())
	m.ttft.write(w, "time_to_first_token_seconds", "Time from a request's submission to its first token.")
	m.tpot.write(w, "time_per_output_token_seconds", "Time between consecutive output tokens of a generation.")
	metric("images_total", "counter", "Images encoded by the vision tower.", m.images)
	metric("image_encode_seconds_total", "counter", "Time spent encoding images (decode, resize, tower).", m.encodeTime.Seconds())
	var tower int64
	if m.towerBytes != nil {
		tower = m.towerBytes()
	}
	metric("vision_tower_resident_bytes", "gauge", "Weight bytes of the vision tower while it is mapped (0: not loaded).", tower)
	fmt.Fprintf(w, "# HELP trit_generations_total Finished generations by finish reason.\n# TYPE trit_generations_total counter\n")
	for _, r := range []string{"stop", "length", "cancelled", "error"} {
		fmt.Fprintf(w, "trit_generations_total{reason=%q} %d\n", r, m.requests[r])
	}
}
