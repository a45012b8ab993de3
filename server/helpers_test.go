package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"trit/engine"
	"trit/model"
	"trit/model/demo"
	"trit/model/kvcache"
	_ "trit/model/llama" // the demo model's architecture
	"trit/tokenizer"
)

// demoEngine builds a fresh engine over the demo model. Each server and
// each reference computation gets its own, because a model serves one
// Forward call at a time.
func demoEngine(t testing.TB) *engine.Engine { return demoEngineWith(t, model.Options{Threads: 2}) }

// demoEngineWith is demoEngine with the given model options.
func demoEngineWith(t testing.TB, opts model.Options) *engine.Engine {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromFile(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &engine.Engine{Model: m, Tok: tok, EOG: tokenizer.EndOfGeneration(f, tok), Batch: 64}
}

// quietLogger keeps test output readable; set TRIT_TEST_LOG to see logs.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testServer is a Server behind httptest on loopback.
type testServer struct {
	*Server
	URL    string
	client *http.Client
	stop   func() // shuts the server down; also run at the end of the test
}

// startServer starts a server for cfg (with a quiet logger) and stops it
// at the end of the test.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tr := &http.Transport{}
	stop := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		ts.Close()
		tr.CloseIdleConnections()
	})
	t.Cleanup(stop)
	return &testServer{Server: s, URL: ts.URL, client: &http.Client{Transport: tr}, stop: stop}
}

// post sends a JSON body and returns the status and body.
func (ts *testServer) post(t testing.TB, path, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return ts.do(t, req)
}

func (ts *testServer) get(t testing.TB, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return ts.do(t, req)
}

func (ts *testServer) do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// greedy returns what engine.Generate (the loop of `trit run`) produces
// greedily for prompt, encoded as the server encodes it.
func greedy(t testing.TB, eng *engine.Engine, prompt string, n int) string {
	t.Helper()
	return greedyResult(t, eng, prompt, n).Text
}

// greedyResult is greedy's whole result (the generated ids too).
func greedyResult(t testing.TB, eng *engine.Engine, prompt string, n int) *engine.Result {
	t.Helper()
	ids := eng.Tok.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
	st, err := eng.Model.NewState(4096)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Generate(context.Background(), st, ids, engine.Params{MaxTokens: n}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkGoroutines fails if more goroutines run than before, after giving
// exiting ones time to finish.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d before, %d after\n%s", before, n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scriptModel is a fake model.Model over the demo tokenizer that writes a
// scripted answer byte by byte: after the last <|im_start|> (the
// assistant header of the ChatML prompt) it emits reply(prompt), then
// <|im_end|>. It makes tool calls, reasoning and slow generations
// deterministic. Each Forward call sleeps delay.
type scriptModel struct {
	tok      *tokenizer.Tokenizer
	vocab    int
	imStart  int
	imEnd    int
	reply    func(prompt string) string
	delay    time.Duration
	forwards atomic.Int64
	fail     atomic.Value // string: "error" or "panic" makes Forward fail
	batches  [][]int      // token count of each step of each Forward call

	mu     sync.Mutex
	active bool
}

type scriptState struct {
	toks []int
	cap  int
}

func (s *scriptState) Pos() int                { return len(s.toks) }
func (s *scriptState) Cap() int                { return s.cap }
func (s *scriptState) Reset()                  { s.toks = s.toks[:0] }
func (s *scriptState) Bytes() map[string]int64 { return map[string]int64{} }
func (s *scriptState) Truncate(n int) bool {
	if n < 0 || n > len(s.toks) {
		return false
	}
	s.toks = s.toks[:n]
	return true
}
func (s *scriptState) Grow(n int) error {
	if len(s.toks)+n > s.cap {
		return fmt.Errorf("%w: %d positions, limit %d", kvcache.ErrFull, len(s.toks)+n, s.cap)
	}
	return nil
}
func (s *scriptState) Clone() model.State {
	return &scriptState{toks: slices.Clone(s.toks), cap: s.cap}
}

func (m *scriptModel) Info() *model.Info {
	return &model.Info{Arch: "script", Name: "script", Vocab: m.vocab, ContextLen: 4096}
}

func (m *scriptModel) NewState(ctx int) (model.State, error) { return &scriptState{cap: ctx}, nil }

func (m *scriptModel) Close() error { return nil }

func (m *scriptModel) Forward(steps []model.Step) error {
	m.mu.Lock()
	if m.active {
		panic("scriptModel: concurrent Forward calls")
	}
	m.active = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.active = false
		m.mu.Unlock()
	}()
	m.forwards.Add(1)
	var sizes []int
	for _, st := range steps {
		sizes = append(sizes, len(st.Tokens))
	}
	m.batches = append(m.batches, sizes) // guarded by active: one caller at a time
	time.Sleep(m.delay)
	switch m.fail.Load() {
	case "error":
		return errors.New("scriptModel: failing as told")
	case "panic":
		panic("scriptModel: panicking as told")
	}
	for _, st := range steps {
		s := st.State.(*scriptState)
		s.toks = append(s.toks, st.Tokens...)
		if st.Logits == nil {
			continue
		}
		clear(st.Logits)
		st.Logits[m.next(s.toks)] = 10
	}
	return nil
}

// next is the scripted token after toks.
func (m *scriptModel) next(toks []int) int {
	last := -1
	for k := len(toks) - 1; k >= 0; k-- {
		if toks[k] == m.imStart {
			last = k
			break
		}
	}
	if last < 0 {
		return m.imEnd
	}
	prompt := m.tok.Decode(toks[:last])
	// Control tokens decode to nothing: an empty thinking block that the
	// template adds leaves only newlines, which replies never start with.
	gen := strings.TrimLeft(strings.TrimPrefix(m.tok.Decode(toks[last+1:]), "assistant\n"), "\n")
	reply := m.reply(prompt)
	if len(gen) < len(reply) && strings.HasPrefix(reply, gen) {
		return int(reply[len(gen)]) // byte tokens have the byte's id
	}
	return m.imEnd
}

// scriptEngine returns an engine over a scriptModel answering with reply.
func scriptEngine(t testing.TB, reply func(string) string, delay time.Duration) (*engine.Engine, *scriptModel) {
	t.Helper()
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := tok.TokenID("<|im_start|>")
	end, _ := tok.TokenID("<|im_end|>")
	m := &scriptModel{tok: tok, vocab: tok.VocabSize(), imStart: im, imEnd: end, reply: reply, delay: delay}
	return &engine.Engine{Model: m, Tok: tok, EOG: tokenizer.EndOfGeneration(f, tok), Batch: 64}, m
}

// readSSE reads a server-sent event stream to its end and returns the
// data payloads; it fails on any line that is not "data: ..." or blank.
func readSSE(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			blank = true
		case strings.HasPrefix(line, "data: ") && blank:
			out = append(out, strings.TrimPrefix(line, "data: "))
			blank = false
		default:
			return out, fmt.Errorf("bad SSE line %q", line)
		}
	}
	return out, sc.Err()
}

// streamResult is a chat stream checked for well-formedness.
type streamResult struct {
	content, reasoning, finish string
	usage                      *usage
}

// checkChatStream validates the payloads of a chat completion stream: one
// id, a role first, one finish reason, an optional usage chunk with no
// choices after it, and [DONE] last.
func checkChatStream(data []string, wantUsage bool) (streamResult, error) {
	var r streamResult
	if len(data) < 3 || data[len(data)-1] != "[DONE]" {
		return r, fmt.Errorf("stream does not end with [DONE]: %q", data)
	}
	id := ""
	for i, d := range data[:len(data)-1] {
		var c chatChunk
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			return r, fmt.Errorf("chunk %d: %v: %s", i, err, d)
		}
		json.Unmarshal([]byte(d), &raw)
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Object != "chat.completion.chunk" {
			return r, fmt.Errorf("chunk %d: id %q object %q", i, c.ID, c.Object)
		}
		if string(raw["usage"]) != "null" && len(c.Choices) != 0 {
			return r, fmt.Errorf("chunk %d has choices and usage %s", i, raw["usage"])
		}
		if len(c.Choices) == 0 {
			if c.Usage == nil || r.usage != nil || r.finish == "" || i != len(data)-2 {
				return r, fmt.Errorf("chunk %d: misplaced usage chunk %s", i, d)
			}
			r.usage = c.Usage
			continue
		}
		ch := c.Choices[0]
		if (i == 0) != (ch.Delta.Role == "assistant") {
			return r, fmt.Errorf("chunk %d: role %q", i, ch.Delta.Role)
		}
		if r.finish != "" {
			return r, fmt.Errorf("chunk %d after the finish reason: %s", i, d)
		}
		if ch.Delta.Content != nil {
			r.content += *ch.Delta.Content
		}
		r.reasoning += ch.Delta.ReasoningContent
		if ch.FinishReason != nil {
			r.finish = *ch.FinishReason
		}
	}
	if r.finish == "" || (r.usage != nil) != wantUsage {
		return r, fmt.Errorf("finish %q, usage %v", r.finish, r.usage)
	}
	return r, nil
}

var (
	demoTokOnce sync.Once
	demoTok     *tokenizer.Tokenizer
	demoTokErr  error
)

// fuzzTok returns the demo model's tokenizer, built once.
func fuzzTok(t testing.TB) *tokenizer.Tokenizer {
	demoTokOnce.Do(func() {
		f, err := demo.File()
		if err != nil {
			demoTokErr = err
			return
		}
		demoTok, demoTokErr = tokenizer.FromMetadata(f)
	})
	if demoTokErr != nil {
		t.Fatal(demoTokErr)
	}
	return demoTok
}
