package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"trit/gguf"
	"trit/internal/testdata"
	"trit/model"
	"trit/model/demo"
)

func trit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := trit(t, "version"); code != 0 || !strings.HasPrefix(out, "trit ") {
		t.Errorf("version: code %d, out %q", code, out)
	}
	code, _, errOut := trit(t, "help")
	if code != 0 {
		t.Errorf("help: code %d", code)
	}
	for _, c := range []string{"run", "chat", "inspect", "logits", "convert", "version"} {
		if !strings.Contains(errOut, "\t"+c) {
			t.Errorf("help does not list %s:\n%s", c, errOut)
		}
	}
	if code, _, _ := trit(t, "frobnicate"); code != 2 {
		t.Errorf("unknown command: code %d, want 2", code)
	}
	if code, _, _ := trit(t, "run", "--no-such-flag"); code != 2 {
		t.Errorf("bad flag: code %d, want 2", code)
	}
}

// The README's main command: trit run with no model runs the demo model.
func TestRunDemo(t *testing.T) {
	code, out, errOut := trit(t, "run", "-n", "16", "--temp", "0", "Hello")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "Hello") || len(out) <= len("Hello\n") {
		t.Errorf("stdout %q: want the prompt and generated text", out)
	}
	for _, want := range []string{"demo model", "meaningless", "tok/s", "generated 16 tokens"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Greedy decoding is deterministic.
	_, out2, _ := trit(t, "run", "-n", "16", "--temp", "0", "-p", "Hello")
	if out2 != out {
		t.Errorf("two greedy runs differ: %q vs %q", out, out2)
	}
	// A fixed seed makes sampling reproducible.
	_, s1, _ := trit(t, "run", "-n", "16", "-s", "7", "Hello")
	_, s2, _ := trit(t, "run", "-n", "16", "-s", "7", "Hello")
	if s1 != s2 {
		t.Errorf("same seed, different output: %q vs %q", s1, s2)
	}
}

func TestLogitsJSON(t *testing.T) {
	code, out, errOut := trit(t, "logits", "--ids", "72,101,108", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var d model.LogitsDump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Mode != "batch" || len(d.Logits) != 3 || len(d.Logits[0]) != d.NVocab || d.NVocab == 0 {
		t.Errorf("dump: mode %q, %d rows, n_vocab %d", d.Mode, len(d.Logits), d.NVocab)
	}
	_, seq, _ := trit(t, "logits", "--ids", "72,101,108", "--json", "--mode", "sequential")
	var s model.LogitsDump
	if err := json.Unmarshal([]byte(seq), &s); err != nil {
		t.Fatal(err)
	}
	for i := range d.Logits {
		for j := range d.Logits[i] {
			if diff := d.Logits[i][j] - s.Logits[i][j]; diff > 1e-3 || diff < -1e-3 {
				t.Fatalf("batch and sequential logits differ at %d,%d: %g vs %g", i, j, d.Logits[i][j], s.Logits[i][j])
			}
		}
	}
	if code, _, _ := trit(t, "logits", "--ids", "1,x"); code != 1 {
		t.Errorf("bad ids: code %d, want 1", code)
	}
	if code, _, _ := trit(t, "logits", "--ids", "999999"); code != 1 {
		t.Errorf("out-of-range id: code %d, want 1", code)
	}
}

func TestInspect(t *testing.T) {
	code, out, errOut := trit(t, "inspect", "--demo")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, want := range []string{"qwen3", "blk.0.attn_q.weight", "Q2_0"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q", want)
		}
	}
	dir := testdata.Path(t, "reference")
	code, out, errOut = trit(t, "inspect", "--json", filepath.Join(dir, "qwen3-tern-TQ2_0.gguf"))
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"TQ2_0"`) {
		t.Errorf("JSON report lacks TQ2_0")
	}
	if code, _, _ := trit(t, "inspect", "/no/such/file.gguf"); code != 1 {
		t.Errorf("missing file: code %d, want 1", code)
	}
}

func TestChatSession(t *testing.T) {
	in := strings.NewReader("Hi there\n/think off\nAnd again\n/bogus\n/reset\n/exit\n")
	var o, e bytes.Buffer
	if err := chatLoop([]string{"-n", "8", "--temp", "0"}, in, &o, &e, false); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	out := o.String()
	for _, want := range []string{"(thinking off)", "(commands:", "(conversation reset)"} {
		if !strings.Contains(out, want) {
			t.Errorf("chat output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(e.String(), "generated at") != 2 {
		t.Errorf("want two answers:\n%s", e.String())
	}
}

func TestConvertUsage(t *testing.T) {
	if code, _, _ := trit(t, "convert"); code != 2 {
		t.Errorf("code %d, want 2", code)
	}
	if code, _, _ := trit(t, "convert", "safetensors", "a", "b"); code != 2 {
		t.Errorf("code %d, want 2", code)
	}
	if code, _, _ := trit(t, "convert", "llama2c", "/no/model.bin", "/no/tok.bin", filepath.Join(t.TempDir(), "x.gguf")); code != 1 {
		t.Errorf("code %d, want 1", code)
	}
}

// A model that declares general.sampling.temp = 0 decodes greedily unless
// --temp says otherwise: two runs with different seeds agree.
func TestModelSamplingDefaults(t *testing.T) {
	f, err := demo.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddKV("general.sampling.temp", gguf.Float32(0)); err != nil {
		t.Fatal(err)
	}
	for _, tn := range f.Tensors {
		data, err := tn.Data()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(tn.Name, tn.Format, tn.Dims, data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "greedy.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	_, a, _ := trit(t, "run", "-m", path, "-n", "24", "-s", "1", "Hello")
	_, b, _ := trit(t, "run", "-m", path, "-n", "24", "-s", "2", "Hello")
	if a != b {
		t.Errorf("the model's temperature 0 was not applied: %q vs %q", a, b)
	}
	_, c, _ := trit(t, "run", "-m", path, "-n", "24", "-s", "1", "--temp", "1.5", "Hello")
	_, d, _ := trit(t, "run", "-m", path, "-n", "24", "-s", "2", "--temp", "1.5", "Hello")
	if c == d {
		t.Errorf("--temp 1.5 did not override the model's default: both %q", c)
	}
}

// trit bench --batch and --verify run batched decoding on a synthetic
// model; their flag errors are usage errors.
func TestBenchBatch(t *testing.T) {
	code, out, errOut := trit(t, "bench", "--shape", "tiny", "--type", "TQ2_0", "--batch", "1,2", "--verify", "2", "-n", "2", "-r", "1", "-t", "1")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"| tg2 B1 | 1 |", "| tg2 B2 | 2 |", "| verify k2 | 2 |", "× B=1", "k-token step ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{
		{"--batch", "0"},
		{"--batch", "2", "-p", "16"},
		{"--verify", "2", "--ctx", "64"},
		{"--batch", "2", "-ctk", "f16,f32"},
	} {
		args = append([]string{"bench", "--shape", "tiny", "--type", "TQ2_0"}, args...)
		if code, _, _ := trit(t, args...); code != 2 {
			t.Errorf("%v: code %d, want 2", args, code)
		}
	}
}
