package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatBody is a chat completion request for one user message.
func chatBody(user string, maxTokens int, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model": "x", "messages": []map[string]string{{"role": "user", "content": user}},
		"max_tokens": maxTokens, "temperature": 0, "stream": stream,
		"stream_options": map[string]bool{"include_usage": true},
	})
	return string(b)
}

// TestConcurrentStreams runs 32 streaming requests against 4 slots: each
// must be well-formed and equal the prompt's greedy output computed alone
// by engine.Generate (so nothing is lost or mixed), and the server must
// leave no goroutine behind.
func TestConcurrentStreams(t *testing.T) {
	const clients, n = 32, 12
	ref := demoEngine(t)
	prompts := make([]string, clients)
	want := make([]string, clients)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("Request %d: tell me a story.", i)
		if i%4 == 0 {
			// Longer than the batch of 64 tokens: prefilled in chunks
			// between the other slots' decoding steps.
			prompts[i] += strings.Repeat(fmt.Sprintf(" %d", i), 40)
		}
		want[i] = greedy(t, ref, chatMLPrompt(t, prompts[i]), n)
	}
	eng := demoEngine(t)
	before := runtime.NumGoroutine()
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Parallel: 4})
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for i := range clients {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(chatBody(prompts[i], n, true)))
			resp, err := ts.client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				errs[i] = fmt.Errorf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				return
			}
			data, err := readSSE(resp.Body)
			if err != nil {
				errs[i] = err
				return
			}
			r, err := checkChatStream(data, true)
			switch {
			case err != nil:
				errs[i] = err
			case r.content != want[i]:
				errs[i] = fmt.Errorf("content %q, want %q", r.content, want[i])
			case r.finish != "length" || r.usage.CompletionTokens != n:
				errs[i] = fmt.Errorf("finish %q usage %+v", r.finish, r.usage)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	_, metrics := ts.get(t, "/metrics")
	for _, m := range []string{"trit_requests_processing 0", "trit_requests_deferred 0",
		fmt.Sprintf("trit_tokens_predicted_total %d", clients*n), `trit_generations_total{reason="length"} 32`} {
		if !strings.Contains(metrics, m+"\n") {
			t.Errorf("metrics lack %q:\n%s", m, metrics)
		}
	}
	// Batching happened: more than one sequence per forward pass on average.
	var perStep float64
	for _, line := range strings.Split(metrics, "\n") {
		fmt.Sscanf(line, "trit_busy_slots_per_decode %g", &perStep)
	}
	if perStep <= 1.5 {
		t.Errorf("%.2f sequences per forward pass, want batching", perStep)
	}
	ts.stop()
	checkGoroutines(t, before)
}

// TestPrefixReuse sends a conversation's next turn: the slot keeps the
// earlier tokens, only the new ones are prefilled, and the output is still
// engine.Generate's.
func TestPrefixReuse(t *testing.T) {
	ref := demoEngine(t)
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	const n = 8
	first := "The first turn."
	code, body := ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"temperature":0}`, first, n))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var r1 completionResponse
	json.Unmarshal([]byte(body), &r1)
	second := first + r1.Choices[0].Text + " And the second."
	code, body = ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"temperature":0}`, second, n))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var r2 completionResponse
	json.Unmarshal([]byte(body), &r2)
	if want := greedy(t, ref, second, n); r2.Choices[0].Text != want {
		t.Errorf("second turn %q, want %q", r2.Choices[0].Text, want)
	}
	// The first request fed its prompt and n-1 generated tokens.
	if r2.Timings == nil || r2.Timings.CacheN != len(first)+n-1 || r2.Timings.PromptN != r2.Usage.PromptTokens-r2.Timings.CacheN {
		t.Errorf("timings %+v usage %+v", r2.Timings, r2.Usage)
	}
	// A prompt that shares only the first turn's prompt keeps that much
	// of the cache (the attention cache is truncated to it).
	third := first + " Something else entirely."
	code, body = ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"temperature":0}`, third, n))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var r3 completionResponse
	json.Unmarshal([]byte(body), &r3)
	if want := greedy(t, ref, third, n); r3.Choices[0].Text != want {
		t.Errorf("third request %q, want %q", r3.Choices[0].Text, want)
	}
	if r3.Timings == nil || r3.Timings.CacheN != len(first) {
		t.Errorf("third request reused %+v, want cache_n %d", r3.Timings, len(first))
	}
}

// startStream posts a streaming chat request and returns the response
// once its first content chunk has arrived.
func startStream(t *testing.T, ctx context.Context, url string, client *http.Client, user string, maxTokens int) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(chatBody(user, maxTokens, true)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"role"`) {
			return resp, br
		}
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func longReply(string) string { return strings.Repeat("word ", 800) }

func TestDisconnectCancels(t *testing.T) {
	eng, sm := scriptEngine(t, longReply, 2*time.Millisecond)
	before := runtime.NumGoroutine()
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Parallel: 2})
	ctx, cancel := context.WithCancel(context.Background())
	resp, _ := startStream(t, ctx, ts.URL, ts.client, "hi", 4000)
	cancel()
	resp.Body.Close()
	waitFor(t, "the cancelled generation to leave its slot", func() bool {
		ts.m.mu.Lock()
		defer ts.m.mu.Unlock()
		return ts.m.requests["cancelled"] == 1 && ts.m.busy.Load() == 0
	})
	f := sm.forwards.Load()
	time.Sleep(30 * time.Millisecond)
	if g := sm.forwards.Load(); g != f {
		t.Errorf("%d forward passes after the cancellation", g-f)
	}
	ts.m.mu.Lock()
	gen := ts.m.predictedN
	ts.m.mu.Unlock()
	if gen > 2000 {
		t.Errorf("%d tokens generated for a client that left after the first", gen)
	}
	ts.stop()
	checkGoroutines(t, before)
}

func TestQueueFull(t *testing.T) {
	eng, _ := scriptEngine(t, longReply, 2*time.Millisecond)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Parallel: 1, Queue: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, _ := startStream(t, ctx, ts.URL, ts.client, "a", 4000)
	defer a.Body.Close()
	waiting := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(chatBody("b", 4000, false)))
		resp, err := ts.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		waiting <- err
	}()
	waitFor(t, "the second request to queue", func() bool { return ts.m.queued.Load() == 1 })
	req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(chatBody("c", 4, false)))
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error APIError }
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || e.Error.Type != "unavailable_error" {
		t.Errorf("third request: %d Retry-After %q error %+v", resp.StatusCode, resp.Header.Get("Retry-After"), e.Error)
	}
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("queued request: %v", err)
	}
	waitFor(t, "the queue to empty", func() bool { return ts.m.queued.Load() == 0 && ts.m.busy.Load() == 0 })
}

// serveReal runs s on a real loopback listener.
func serveReal(t *testing.T, s *Server) (url string, done chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	return "http://" + ln.Addr().String(), done
}

func TestGracefulShutdown(t *testing.T) {
	reply := "a complete answer of a few words"
	eng, _ := scriptEngine(t, func(string) string { return reply }, 5*time.Millisecond)
	before := runtime.NumGoroutine()
	s, err := New(Config{Backend: &Backend{Engine: eng}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	url, served := serveReal(t, s)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	resp, br := startStream(t, context.Background(), url, client, "hi", 100)
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	data, err := readSSE(br)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The in-flight stream finished: its remaining chunks, the finish
	// reason, [DONE].
	if data[len(data)-1] != "[DONE]" || !strings.Contains(strings.Join(data, ""), `"finish_reason":"stop"`) {
		t.Fatalf("stream cut short: %q", data)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := client.Get(url + "/health"); err == nil {
		t.Error("the server still accepts connections after Shutdown")
	}
	tr.CloseIdleConnections()
	checkGoroutines(t, before)
}

func TestShutdownDeadline(t *testing.T) {
	eng, _ := scriptEngine(t, longReply, 2*time.Millisecond)
	before := runtime.NumGoroutine()
	s, err := New(Config{Backend: &Backend{Engine: eng}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	url, served := serveReal(t, s)
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	resp, br := startStream(t, context.Background(), url, client, "hi", 4000)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want the deadline error", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("Shutdown took %v past a 100 ms deadline", d)
	}
	readSSE(br) // the stream ends: with an error event or a closed connection
	resp.Body.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	tr.CloseIdleConnections()
	checkGoroutines(t, before)
}

func TestHealthWhileLoading(t *testing.T) {
	ts := startServer(t, Config{})
	for _, p := range []string{"/health", "/v1/health", "/v1/models"} {
		if code, body := ts.get(t, p); code != 503 || !strings.Contains(body, "Loading model") {
			t.Errorf("%s while loading: %d %s", p, code, body)
		}
	}
	if code, _ := ts.post(t, "/v1/chat/completions", chatBody("hi", 1, false)); code != 503 {
		t.Errorf("chat while loading: %d", code)
	}
	if err := ts.Load(&Backend{Engine: demoEngine(t)}); err != nil {
		t.Fatal(err)
	}
	if code, body := ts.get(t, "/health"); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("/health after loading: %d %s", code, body)
	}
}

// TestChunkedPrefill checks the batching itself: a long prompt arriving
// while another request decodes is prefilled in chunks of the batch size,
// each in the same Forward call as the other request's next token.
func TestChunkedPrefill(t *testing.T) {
	eng, sm := scriptEngine(t, longReply, time.Millisecond)
	eng.Batch = 16
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Parallel: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, _ := startStream(t, ctx, ts.URL, ts.client, "a", 4000)
	defer a.Body.Close()
	long := strings.Repeat("x", 100)
	code, body := ts.post(t, "/v1/chat/completions", chatBody(long, 3, false))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	cancel()
	ts.stop()
	// The long request's prompt is ChatML around 100 bytes: > 100 tokens.
	chunks, mixed := 0, 0
	for _, b := range sm.batches {
		tokens := 0
		for _, n := range b {
			tokens += n
		}
		if tokens > 16 {
			t.Fatalf("a forward pass of %d tokens, over the batch of 16: %v", tokens, b)
		}
		if len(b) == 2 && max(b[0], b[1]) > 1 {
			chunks++
			if min(b[0], b[1]) == 1 {
				mixed++
			}
		}
	}
	if chunks < 100/15 || mixed != chunks {
		t.Errorf("%d prefill chunks, %d of them next to a decoding step; batches %v", chunks, mixed, sm.batches)
	}
}
