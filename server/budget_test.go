package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"trit/engine"
	"trit/model"
	"trit/model/demo"
	"trit/model/kvcache"
	"trit/tokenizer"
)

// budgetEngine is demoEngine with its caches drawn from a budget of pages
// pages (of every layer).
func budgetEngine(t *testing.T, pages int) (*engine.Engine, *kvcache.Budget) {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	b := kvcache.NewBudget(0)
	m, err := model.FromFile(f, model.Options{Threads: 2, KVBudget: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	b.SetLimit(int64(pages) * kvcache.PageSize * m.Info().KVTokenBytes)
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Engine{Model: m, Tok: tok, EOG: tokenizer.EndOfGeneration(f, tok), Batch: 64}, b
}

// TestKVBudget shares a budget of three pages between two slots whose
// requests need two pages each: one waits for the other's pages, and both
// finish. A request that needs more than
// the whole budget gets a clear 503.
func TestKVBudget(t *testing.T) {
	eng, budget := budgetEngine(t, 3)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Parallel: 2, Context: 1024})
	const n = kvcache.PageSize + 20
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"prompt":"Request %d.","max_tokens":%d,"temperature":0,"ignore_eos":true}`, i, n)
			code, resp := ts.post(t, "/v1/completions", body)
			if code != 200 {
				t.Errorf("request %d: %d %s", i, code, resp)
				return
			}
			var r completionResponse
			json.Unmarshal([]byte(resp), &r)
			if r.Usage.CompletionTokens != n {
				t.Errorf("request %d: %d tokens, want %d", i, r.Usage.CompletionTokens, n)
			}
		}()
	}
	wg.Wait()
	if budget.Used() > budget.Limit() {
		t.Errorf("budget: %d bytes used of %d", budget.Used(), budget.Limit())
	}
	code, resp := ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":"Too long.","max_tokens":%d,"temperature":0,"ignore_eos":true}`, 3*kvcache.PageSize+10))
	if code != 503 || !strings.Contains(resp, "kv_budget_exhausted") {
		t.Errorf("a request beyond the budget: %d %s, want 503 kv_budget_exhausted", code, resp)
	}
}

// TestContextEnd runs a slot to the end of its context, across a page
// boundary: the generation stops there with finish reason length. The
// last token is sampled from the logits of the last position and not fed,
// so prompt and completion hold one token more than the context.
func TestContextEnd(t *testing.T) {
	const ctx = kvcache.PageSize + 44
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, Context: ctx})
	code, resp := ts.post(t, "/v1/completions", `{"prompt":"Long.","max_tokens":300,"temperature":0,"ignore_eos":true}`)
	if code != 200 {
		t.Fatalf("%d %s", code, resp)
	}
	var r completionResponse
	json.Unmarshal([]byte(resp), &r)
	if f := r.Choices[0].FinishReason; f == nil || *f != "length" || r.Usage.PromptTokens+r.Usage.CompletionTokens != ctx+1 {
		t.Errorf("finish %v after %d prompt + %d generated tokens, want length at the context of %d",
			*r.Choices[0].FinishReason, r.Usage.PromptTokens, r.Usage.CompletionTokens, ctx)
	}
}

// TestPrefillCap checks the interleaving estimate: with no measurements
// the cap is the minimum; after decode-only steps and mixed steps it is
// the prompt tokens that take about two decode steps.
func TestPrefillCap(t *testing.T) {
	var s sched
	if got := s.prefillCap(); got != minPrefillChunk {
		t.Errorf("cold cap %d, want %d", got, minPrefillChunk)
	}
	for range 20 {
		s.observe(4, 0, 40*time.Millisecond)    // decoding only
		s.observe(4, 100, 240*time.Millisecond) // 100 prompt tokens: 2 ms each
	}
	if got := s.prefillCap(); got < 38 || got > 42 {
		t.Errorf("cap %d, want about 40 (2 × 40 ms of decode ÷ 2 ms per prompt token)", got)
	}
}

// TestLatencyMetrics checks the time-to-first-token and time-per-output-
// token histograms and the KV gauges after one request.
func TestLatencyMetrics(t *testing.T) {
	eng, budget := budgetEngine(t, 8)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, KVBudget: budget}})
	const n = 6
	if code, body := ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":"Hi","max_tokens":%d,"temperature":0,"ignore_eos":true}`, n)); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	_, body := ts.get(t, "/metrics")
	for _, want := range []string{
		"trit_time_to_first_token_seconds_count 1",
		fmt.Sprintf("trit_time_per_output_token_seconds_count %d", n-1),
		`trit_time_per_output_token_seconds_bucket{le="+Inf"} 5`,
		fmt.Sprintf("trit_kv_cache_budget_bytes %d", budget.Limit()),
		fmt.Sprintf("trit_kv_cache_bytes %d", kvcache.PageSize*eng.Model.Info().KVTokenBytes),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
