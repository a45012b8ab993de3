package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trit/model"
	_ "trit/model/llama"  // the qwen3 architecture of the tiny shape
	_ "trit/model/qwen35" // the hybrid of tiny-qwen35
	"trit/quant"
)

// loadTiny writes a tiny shape in format f and loads it.
func loadTiny(t *testing.T, shape string, f *quant.Format) model.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := WriteSyntheticFile(path, ShapeByName(shape), Types{Weight: f}, 7); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(path, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// Every weight type of both architectures runs, with the samples, context
// and memory accounting asked for.
func TestRun(t *testing.T) {
	for _, shape := range []string{"tiny", "tiny-qwen35"} {
		for _, f := range []*quant.Format{quant.Q2_0, quant.TQ2_0, quant.TQ1_0, quant.PTQ1_0, quant.PQ2_0, quant.Q1_0} {
			testRun(t, shape, f)
		}
	}
}

func testRun(t *testing.T, shape string, f *quant.Format) {
	m := loadTiny(t, shape, f)
	tests := []struct {
		test    Test
		cfg     Config
		wantCtx int
	}{
		{Test{Prompt: 40}, Config{Reps: 2, Batch: 16}, 40},
		{Test{Gen: 8}, Config{Reps: 3}, 8},
		{Test{Gen: 4, Depth: 20}, Config{Reps: 2, Batch: 8, Ctx: 64}, 64},
	}
	for _, tt := range tests {
		r, err := Run(m, tt.test, tt.cfg)
		if err != nil {
			t.Fatalf("%s %s: %v", f.Name, tt.test.Name(), err)
		}
		if len(r.Samples) != tt.cfg.Reps || r.Ctx != tt.wantCtx {
			t.Errorf("%s %s: %d samples, ctx %d; want %d, %d", f.Name, tt.test.Name(), len(r.Samples), r.Ctx, tt.cfg.Reps, tt.wantCtx)
		}
		mean, _ := r.TokensPerSec()
		if mean <= 0 {
			t.Errorf("%s %s: %v t/s", f.Name, tt.test.Name(), mean)
		}
		mem := r.Memory
		if mem.KV <= 0 || mem.Weights != m.Info().WeightBytes || mem.Heap <= 0 {
			t.Errorf("%s %s: memory %+v", f.Name, tt.test.Name(), mem)
		}
		if (mem.Recurrent > 0) != (shape == "tiny-qwen35") {
			t.Errorf("%s %s %s: recurrent state %d bytes", shape, f.Name, tt.test.Name(), mem.Recurrent)
		}
	}
}

func TestRunErrors(t *testing.T) {
	m := loadTiny(t, "tiny", quant.Q2_0)
	for _, tt := range []struct {
		test Test
		cfg  Config
	}{
		{Test{}, Config{}},
		{Test{Prompt: 4, Gen: 4}, Config{}},
		{Test{Gen: -1}, Config{}},
		{Test{Gen: 8, Depth: 8}, Config{Ctx: 10}},
	} {
		if _, err := Run(m, tt.test, tt.cfg); !errors.Is(err, ErrTest) {
			t.Errorf("%+v %+v: got %v, want ErrTest", tt.test, tt.cfg, err)
		}
	}
}

func TestTestName(t *testing.T) {
	for _, tt := range []struct {
		t    Test
		want string
	}{
		{Test{Prompt: 512}, "pp512"},
		{Test{Gen: 128}, "tg128"},
		{Test{Gen: 128, Depth: 4096}, "tg128 @ d4096"},
	} {
		if got := tt.t.Name(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestTokensPerSec(t *testing.T) {
	r := &Result{Test: Test{Gen: 100}, Samples: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}}
	mean, sd := r.TokensPerSec()
	// Rates 100, 50, 25: mean 58.33, sample sd 38.19.
	if mean < 58.33 || mean > 58.34 || sd < 38.18 || sd > 38.20 {
		t.Errorf("mean %v sd %v, want 58.33 ± 38.19", mean, sd)
	}
}

func sampleRows() []Row {
	res := &Result{
		Test: Test{Gen: 128, Depth: 64}, Ctx: 4096, Batch: 512,
		Samples: []time.Duration{time.Second, time.Second},
		Memory:  Memory{PeakRSS: 3 << 20, Weights: 1 << 20, KV: 2 << 20, Heap: 5 << 20, Scratch: 3 << 20},
	}
	desc := ModelDesc{Name: "tiny", Arch: "qwen3", Size: 1 << 20, Params: 2_500_000_000, Type: "TQ2_0"}
	return []Row{{Model: desc, Threads: 2, KVType: "f16", Result: res, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
}

func TestWriteJSON(t *testing.T) {
	rows := sampleRows()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rows); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	want := map[string]any{
		"model_filename": "tiny", "model_type": "TQ2_0", "n_threads": 2.0, "n_gen": 128.0, "n_prompt": 0.0,
		"n_depth": 64.0, "n_ctx": 4096.0, "test": "tg128 @ d64", "avg_ts": 128.0, "stddev_ts": 0.0,
		"avg_ns": 1e9, "type_k": "f16", "kv_bytes": float64(2 << 20), "peak_rss_bytes": float64(3 << 20),
		"test_time": "2026-01-02T03:04:05Z", "model_n_params": 2.5e9,
	}
	for k, v := range want {
		if recs[0][k] != v {
			t.Errorf("%s = %v, want %v", k, recs[0][k], v)
		}
	}
	buf.Reset()
	if err := WriteJSONL(&buf, rows[0]); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "\n") != 1 || !json.Valid(buf.Bytes()) {
		t.Errorf("JSONL line: %q", buf.String())
	}
}

func TestTable(t *testing.T) {
	rows := sampleRows()
	for _, memory := range []bool{false, true} {
		var buf bytes.Buffer
		tab := NewTable(&buf, memory)
		for range 2 {
			if err := tab.Add(rows[0]); err != nil {
				t.Fatal(err)
			}
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("memory %v: %d lines:\n%s", memory, len(lines), buf.String())
		}
		for _, want := range []string{"| tiny TQ2_0 |", "| 1.00 MiB |", "| 2.50 B |", "| tg128 @ d64 |", "| 128.00 ± 0.00 |"} {
			if !strings.Contains(lines[2], want) {
				t.Errorf("memory %v: row %q lacks %q", memory, lines[2], want)
			}
		}
		if got := strings.Contains(lines[0], "peak RSS") && strings.Contains(lines[2], "| 3.0 MiB |"); got != memory {
			t.Errorf("memory %v: header %q row %q", memory, lines[0], lines[2])
		}
	}
}

func TestPeakRSS(t *testing.T) {
	rss, err := RSS()
	if errors.Is(err, ErrNoProc) {
		t.Skip("no /proc/self/status on this system")
	}
	if err != nil {
		t.Fatal(err)
	}
	// The mark is read after the resident set: it can only have grown.
	peak, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || peak < rss {
		t.Errorf("peak %d < rss %d", peak, rss)
	}
	// Touching 64 MiB raises the mark by about that much.
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	after, _ := PeakRSS()
	if after < rss+48<<20 {
		t.Errorf("peak %d after touching 64 MiB from rss %d", after, rss)
	}
	b[len(b)-1] = 2
}

func TestDescribe(t *testing.T) {
	info := &model.Info{Arch: "qwen3", WeightBytes: 1000, Params: 5000,
		Types: map[string]int64{"TQ2_0": 700, "Q6_K": 295, "F32": 5}}
	d := Describe("m.gguf", info)
	if d.Type != "TQ2_0+Q6_K" || d.Size != 1000 || d.Params != 5000 || d.Arch != "qwen3" {
		t.Errorf("Describe: %+v", d)
	}
}

func TestParseInts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"512", []int{512}, true},
		{"1,2", []int{1, 2}, true},
		{" 4096, 32768 ", []int{4096, 32768}, true},
		{"", nil, false},
		{"1,,2", nil, false},
		{"-1", nil, false},
		{"x", nil, false},
	} {
		got, err := ParseInts(tt.in)
		if (err == nil) != tt.ok || len(got) != len(tt.want) {
			t.Errorf("%q: %v, %v", tt.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

func TestPlan(t *testing.T) {
	names := func(items []Item) string {
		var s []string
		for _, it := range items {
			s = append(s, fmt.Sprintf("%s/%d", it.Test.Name(), it.Ctx))
		}
		return strings.Join(s, ", ")
	}
	tests := []struct {
		plan Plan
		want string // "" for an error
	}{
		{Plan{Prompts: []int{512}, Gens: []int{128}}, "pp512/0, tg128/0"},
		{Plan{Prompts: []int{0}, Gens: []int{16, 32}, Depths: []int{0, 100}}, "tg16/0, tg16 @ d100/0, tg32/0, tg32 @ d100/0"},
		// --ctx fills to the end, capped at MaxFill.
		{Plan{Prompts: []int{0}, Gens: []int{128}, Ctxs: []int{4096, 32768}, MaxFill: 8192},
			"tg128 @ d3968/4096, tg128 @ d8192/32768"},
		{Plan{Prompts: []int{512}, Gens: []int{0}, Ctxs: []int{256}, MaxFill: 8192}, ""},
	}
	for _, tt := range tests {
		items, err := tt.plan.Items()
		if tt.want == "" {
			if !errors.Is(err, ErrTest) {
				t.Errorf("%+v: got %v, want ErrTest", tt.plan, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := names(items); got != tt.want {
			t.Errorf("%+v:\n got %s\nwant %s", tt.plan, got, tt.want)
		}
	}
}

// fake is a model that records the forward passes it is asked for.
type fake struct {
	info  model.Info
	calls []string // "n tokens from pos p, logits yes/no"
}

type fakeState struct{ pos, cap int }

func (s *fakeState) Pos() int                { return s.pos }
func (s *fakeState) Cap() int                { return s.cap }
func (s *fakeState) Reset()                  { s.pos = 0 }
func (s *fakeState) Bytes() map[string]int64 { return map[string]int64{"kv": int64(s.cap)} }
func (s *fakeState) Clone() model.State      { c := *s; return &c }
func (s *fakeState) Truncate(n int) bool     { s.pos = n; return true }
func (s *fakeState) Grow(n int) error        { return nil }

func (f *fake) Info() *model.Info { return &f.info }
func (f *fake) Close() error      { return nil }
func (f *fake) NewState(ctx int) (model.State, error) {
	return &fakeState{cap: ctx}, nil
}

// Forward records a pass as its steps joined by "+", each "n@pos" with L
// for the last token's logits or A for every token's.
func (f *fake) Forward(steps []model.Step) error {
	var call []string
	for _, s := range steps {
		st := s.State.(*fakeState)
		for _, tok := range s.Tokens {
			if tok < 0 || tok >= f.info.Vocab {
				return fmt.Errorf("token %d out of range", tok)
			}
		}
		if st.pos+len(s.Tokens) > st.cap {
			return fmt.Errorf("context overflow")
		}
		mark := ""
		switch {
		case s.All && len(s.Logits) == len(s.Tokens)*f.info.Vocab:
			mark = "A"
		case !s.All && len(s.Logits) == f.info.Vocab:
			mark = "L"
		}
		call = append(call, fmt.Sprintf("%d@%d%s", len(s.Tokens), st.pos, mark))
		st.pos += len(s.Tokens)
	}
	f.calls = append(f.calls, strings.Join(call, "+"))
	return nil
}

// The forward passes follow llama-bench: a warm-up on an empty cache, then
// per repetition a reset, the untimed depth fill in batches, and the timed
// test (pp in batches with logits for the last, tg one token at a time
// with logits).
func TestRunPasses(t *testing.T) {
	tests := []struct {
		test Test
		cfg  Config
		want string
	}{
		{Test{Prompt: 10}, Config{Reps: 2, Batch: 4},
			"4@0 4@4 2@8L | 4@0 4@4 2@8L | 4@0 4@4 2@8L"},
		{Test{Gen: 3, Depth: 5}, Config{Reps: 2, Batch: 4},
			"1@0L | 4@0 1@4 1@5L 1@6L 1@7L | 4@0 1@4 1@5L 1@6L 1@7L"},
		{Test{Gen: 2}, Config{Reps: 1, NoWarmup: true}, "1@0L 1@1L"},
	}
	for _, tt := range tests {
		f := &fake{info: model.Info{Vocab: 50}}
		if _, err := Run(f, tt.test, tt.cfg); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(f.calls, " ")
		// Passes at position 0 after the first start a new run.
		got = strings.ReplaceAll(got, " 4@0", " | 4@0")
		got = strings.ReplaceAll(got, " 1@0", " | 1@0")
		if got != tt.want {
			t.Errorf("%s %+v:\n got %s\nwant %s", tt.test.Name(), tt.cfg, got, tt.want)
		}
	}
}

// A context whose state exceeds the machine's memory is refused before
// anything is allocated.
func TestRunMemoryLimit(t *testing.T) {
	if _, err := MemAvailable(); err != nil {
		t.Skip("no /proc/meminfo on this system")
	}
	m := loadTiny(t, "tiny", quant.Q2_0)
	// 2 layers × K and V × 128 floats × 4 bytes = 2 KiB per position:
	// 2^40 positions are 2 PiB.
	_, err := Run(m, Test{Gen: 1}, Config{Reps: 1, Ctx: 1 << 40})
	if !errors.Is(err, ErrMemory) {
		t.Errorf("got %v, want ErrMemory", err)
	}
}
