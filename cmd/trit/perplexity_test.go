package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trit perplexity on the demo model: the per-chunk and final lines, JSON,
// and a base file saved and compared against the same model (KL 0).
func TestPerplexityCommand(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("The cat sat on the mat. ", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := trit(t, "perplexity", "-f", text, "-c", "64")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, want := range []string{"[1/", "Final estimate: PPL = ", "+/-"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "tok/s") || !strings.Contains(errOut, "chunks") {
		t.Errorf("stderr lacks the progress bar and speed:\n%s", errOut)
	}

	base := filepath.Join(dir, "base.bin")
	code, out, errOut = trit(t, "perplexity", "-f", text, "-c", "64", "--json", "--save-logits", base, "--save-top", "16")
	if code != 0 {
		t.Fatalf("save: code %d: %s", code, errOut)
	}
	var res struct {
		PPL, Err float64
		Chunks   int
		Running  []struct{ PPL float64 }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.PPL <= 1 || res.Err <= 0 || res.Chunks < 1 || len(res.Running) != res.Chunks || res.Running[res.Chunks-1].PPL != res.PPL {
		t.Errorf("JSON %+v", res)
	}
	code, out, errOut = trit(t, "perplexity", "--kl-base", base, "--json")
	if code != 0 {
		t.Fatalf("kl-base: code %d: %s", code, errOut)
	}
	var kl struct {
		PPL float64
		KL  struct {
			Mean, Max, SameTop float64
			Base               struct{ PPL float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &kl); err != nil {
		t.Fatal(err)
	}
	if kl.KL.Mean != 0 || kl.KL.Max != 0 || kl.KL.SameTop != 1 || kl.PPL != res.PPL || kl.KL.Base.PPL != res.PPL {
		t.Errorf("against itself: %+v, want KL 0, same top 1, PPL %v", kl, res.PPL)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"no text", []string{"perplexity"}, 2},
		{"save and compare", []string{"perplexity", "-f", text, "--save-logits", base, "--kl-base", base}, 2},
		{"other context than the base", []string{"perplexity", "--kl-base", base, "-c", "32"}, 1},
		{"text too short", []string{"perplexity", "-f", text, "-c", "4096"}, 1},
		{"not a base file", []string{"perplexity", "--kl-base", text}, 1},
	} {
		if code, _, errOut := trit(t, tc.args...); code != tc.code {
			t.Errorf("%s: code %d, want %d: %s", tc.name, code, tc.code, errOut)
		}
	}
}
