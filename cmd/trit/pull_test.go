package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trit/internal/hubtest"
	"trit/model/demo"
)

// fakeHub serves the demo model as the GGUF files of two repositories and
// an MLX-like pack, and points HF_ENDPOINT and TRIT_MODELS at it and at an
// empty store.
func fakeHub(t *testing.T) *hubtest.Hub {
	t.Helper()
	data, err := demo.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	h.Add("acme/Demo-gguf",
		hubtest.File{Path: "README.md", Data: []byte("# demo\n")},
		hubtest.File{Path: "Demo-Q2_0.gguf", Data: data, LFS: true},
		hubtest.File{Path: "Demo-F16.gguf", Data: append(bytes.Clone(data[:len(data)-1]), data[len(data)-1]^1), LFS: true})
	h.Add("acme/Other-gguf", hubtest.File{Path: "Other-PQ2_0.gguf", Data: data, LFS: true})
	h.Add("acme/Demo-mlx-2bit",
		hubtest.File{Path: "config.json", Data: []byte(`{"model_type":"qwen3","quantization":{"bits":2,"group_size":128}}`)},
		hubtest.File{Path: "model.safetensors", Data: bytes.Repeat([]byte{7}, 5000), LFS: true},
		hubtest.File{Path: "tokenizer.json", Data: []byte(`{}`)})
	h.Add("acme/gated-gguf", hubtest.File{Path: "G-Q2_0.gguf", Data: data, LFS: true})
	h.RequireToken("acme/gated-gguf", "hf_test", true)
	t.Setenv("HF_ENDPOINT", h.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("TRIT_MODELS", t.TempDir())
	return h
}

func cdnRequests(h *hubtest.Hub, file string) int {
	n := 0
	for _, r := range h.Downloads(file) {
		if r.Server == "cdn" {
			n++
		}
	}
	return n
}

func TestPullListRunRm(t *testing.T) {
	h := fakeHub(t)
	code, out, errOut := trit(t, "pull", "acme/Demo-gguf:q2_0")
	t.Log(out + errOut)
	if code != 0 {
		t.Fatalf("pull: code %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "pulled acme/Demo-gguf:Q2_0") || !strings.Contains(out, "trit run -m acme/Demo-gguf:Q2_0") {
		t.Errorf("pull stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "checksum verified") || strings.Contains(errOut, "\r") {
		t.Errorf("pull stderr (not a terminal: no redrawn bar):\n%s", errOut)
	}

	code, out, errOut = trit(t, "list")
	if code != 0 {
		t.Fatalf("list: code %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("list:\n%s", out)
	}
	for _, want := range []string{"NAME", "SIZE", "FORMAT", "QUANT", "ARCH", "LAST USED"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("list header lacks %s: %s", want, lines[0])
		}
	}
	for _, want := range []string{"acme/Demo-gguf:Q2_0", "gguf", "Q2_0", "qwen3", "just now"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("list row lacks %q: %s", want, lines[1])
		}
	}

	// -m NAME runs the pulled file: the demo model's greedy text.
	_, want, _ := trit(t, "run", "-n", "8", "--temp", "0", "Hello")
	code, got, errOut := trit(t, "run", "-m", "acme/Demo-gguf:Q2_0", "-n", "8", "--temp", "0", "Hello")
	if code != 0 {
		t.Fatalf("run -m NAME: code %d\n%s", code, errOut)
	}
	if got != want || !strings.Contains(errOut, "model acme/Demo-gguf:Q2_0") || !strings.Contains(errOut, "Demo-Q2_0.gguf") {
		t.Errorf("run -m NAME: %q (want %q)\n%s", got, want, errOut)
	}
	// The bare repository name works while only one of its models is pulled.
	if code, _, errOut := trit(t, "run", "-m", "acme/Demo-gguf", "-n", "2", "Hi"); code != 0 {
		t.Errorf("run -m REPO: code %d\n%s", code, errOut)
	}
	// An unpulled name says how to pull it.
	code, _, errOut = trit(t, "run", "-m", "acme/Demo-gguf:F16", "-n", "2", "Hi")
	if code != 1 || !strings.Contains(errOut, "trit pull acme/Demo-gguf:F16") {
		t.Errorf("run -m unpulled: code %d\n%s", code, errOut)
	}

	code, out, errOut = trit(t, "rm", "acme/Demo-gguf:Q2_0")
	if code != 0 || !strings.Contains(out, "removed acme/Demo-gguf:Q2_0") {
		t.Fatalf("rm: code %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := trit(t, "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("list after rm: %s", out)
	}
	if code, _, _ := trit(t, "rm", "acme/Demo-gguf:Q2_0"); code != 1 {
		t.Errorf("rm of a removed model: code %d", code)
	}
	if code, _, _ := trit(t, "run", "-m", "acme/Demo-gguf:Q2_0", "-n", "2", "Hi"); code != 1 {
		t.Errorf("run -m of a removed model: code %d", code)
	}
	if n := cdnRequests(h, "Demo-Q2_0.gguf"); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

// -hf pulls on first use, and uses the stored model afterwards.
func TestHFFlag(t *testing.T) {
	h := fakeHub(t)
	code, out, errOut := trit(t, "run", "-hf", "acme/Other-gguf", "-n", "4", "--temp", "0", "Hello")
	t.Log(out + errOut)
	if code != 0 {
		t.Fatalf("code %d\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "Hello") || !strings.Contains(errOut, "pulling acme/Other-gguf:PQ2_0") {
		t.Errorf("first -hf run: %q\n%s", out, errOut)
	}
	code, out2, errOut := trit(t, "run", "--hf-repo", "acme/Other-gguf:pq2_0", "-n", "4", "--temp", "0", "Hello")
	if code != 0 || out2 != out || strings.Contains(errOut, "pulling") {
		t.Errorf("second -hf run: code %d, %q\n%s", code, out2, errOut)
	}
	if n := cdnRequests(h, "Other-PQ2_0.gguf"); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
	if code, _, errOut := trit(t, "run", "-hf", "acme/Other-gguf", "-m", "x.gguf", "Hi"); code != 1 || !strings.Contains(errOut, "not both") {
		t.Errorf("-hf with -m: code %d\n%s", code, errOut)
	}
	// trit list reports last use.
	_, js, _ := trit(t, "list", "--json")
	var rows []listed
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("list --json: %v\n%s", err, js)
	}
	if r := rows[0]; r.Name != "acme/Other-gguf:PQ2_0" || r.Arch != "qwen3" || time.Since(r.LastUsed) > time.Minute || r.Size == 0 {
		t.Errorf("row %+v", r)
	}
}

func TestPullFailures(t *testing.T) {
	fakeHub(t)
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"pull", "acme/nothing"}, 1, []string{"acme/nothing", "HF_TOKEN"}},
		{[]string{"pull", "acme/Demo-gguf:Q9"}, 1, []string{"no model file matching \"Q9\"", "Demo-Q2_0.gguf", "Demo-F16.gguf"}},
		{[]string{"pull", "acme/gated-gguf"}, 1, []string{"gated", "HF_TOKEN"}},
		{[]string{"pull", "acme/Demo-gguf", "--mmproj"}, 1, []string{"no vision projector"}},
		{[]string{"pull", "nonsense"}, 1, []string{"owner/name"}},
		{[]string{"pull"}, 2, []string{"Usage: trit pull"}},
		{[]string{"rm"}, 2, nil},
		{[]string{"run", "-hf", "acme/nothing", "Hi"}, 1, []string{"HF_TOKEN"}},
	} {
		code, _, errOut := trit(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: code %d, want %d\n%s", tc.args, code, tc.code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
	}
	t.Setenv("HF_TOKEN", "hf_test")
	if code, _, errOut := trit(t, "pull", "acme/gated-gguf"); code != 0 {
		t.Errorf("gated with HF_TOKEN: code %d\n%s", code, errOut)
	}
	if _, out, _ := trit(t, "list"); strings.Contains(out, "Demo") {
		t.Errorf("failed pulls are listed:\n%s", out)
	}
}

// Ctrl-C stops a pull cleanly: exit code 1, a message that the same
// command resumes, nothing listed; the next pull completes.
func TestPullInterrupt(t *testing.T) {
	h := fakeHub(t)
	arrived, release := h.Hold("Demo-Q2_0.gguf")
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() { exit <- Main([]string{"pull", "acme/Demo-gguf:Q2_0"}, &bytes.Buffer{}, &stderr) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("the pull never reached the CDN:\n%s", stderr.String())
	}
	self, _ := os.FindProcess(os.Getpid())
	if err := self.Signal(os.Interrupt); err != nil {
		release()
		<-exit
		t.Skipf("cannot send an interrupt here: %v", err)
	}
	select {
	case code := <-exit:
		if code != 1 || !strings.Contains(stderr.String(), "the same pull resumes it") {
			t.Errorf("code %d:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the pull did not stop on Ctrl-C:\n%s", stderr.String())
	}
	release()
	if _, out, _ := trit(t, "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("an interrupted pull is listed: %s", out)
	}
	if code, _, errOut := trit(t, "pull", "acme/Demo-gguf:Q2_0"); code != 0 {
		t.Errorf("pull after the interrupt: code %d\n%s", code, errOut)
	}
}

func TestPullNetworkDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_ENDPOINT", "http://"+l.Addr().String())
	l.Close() // nothing listens there now
	t.Setenv("TRIT_MODELS", t.TempDir())
	code, _, errOut := trit(t, "pull", "prism-ml/Ternary-Bonsai-8B-gguf")
	if code != 1 || !strings.Contains(errOut, "cannot reach") {
		t.Errorf("code %d\n%s", code, errOut)
	}
	// A missing file that looks like owner/name is still a missing file.
	code, _, errOut = trit(t, "run", "-m", "models/x.gguf", "Hi")
	if code != 1 || strings.Contains(errOut, "trit pull") || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: code %d\n%s", code, errOut)
	}
}

func TestPullPackCLI(t *testing.T) {
	fakeHub(t)
	code, out, errOut := trit(t, "pull", "acme/Demo-mlx-2bit")
	if code != 0 || !strings.Contains(errOut, "whole pack (3 files)") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	dir := strings.TrimSpace(out[strings.LastIndex(out, ": ")+2:])
	for _, f := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	_, out, _ = trit(t, "list")
	for _, want := range []string{"acme/Demo-mlx-2bit", "mlx", "2-bit g128", "qwen3"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := trit(t, "run", "-m", "acme/Demo-mlx-2bit", "Hi"); code != 1 || !strings.Contains(errOut, "GGUF") {
		t.Errorf("run on a pack: code %d\n%s", code, errOut)
	}
}

func TestDemoHint(t *testing.T) {
	_, _, errOut := trit(t, "run", "-n", "1", "Hi")
	if !strings.Contains(errOut, "trit pull prism-ml/Ternary-Bonsai-8B-gguf") {
		t.Errorf("the demo run does not say how to get a real model:\n%s", errOut)
	}
}

func TestBar(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(1000, 0)
	b := &bar{w: &buf, tty: true, now: func() time.Time { return clock }}
	b.Start("dir/model.gguf", 0, 100<<20)
	clock = clock.Add(2 * time.Second)
	b.Update(50 << 20)
	clock = clock.Add(50 * time.Millisecond)
	b.Update(51 << 20) // too soon: no redraw
	clock = clock.Add(2 * time.Second)
	b.Update(100 << 20)
	b.Finish(nil)
	out := buf.String()
	for _, want := range []string{"\rmodel.gguf [", " 50.0% 50.0 MiB / 100.0 MiB  25.0 MiB/s  ETA 2s", "100.0%", "done, 100.0 MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "51.0 MiB") {
		t.Errorf("redrawn within %v:\n%q", redrawEvery, out)
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("want the bar's line ended once, then the done line:\n%q", out)
	}
	// Another message in the middle of a file starts on a new line.
	buf.Reset()
	b.Start("model.gguf", 0, 100)
	b.endLine()
	b.endLine()
	if out := buf.String(); !strings.HasSuffix(out, "\x1b[K\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("endLine: %q", out)
	}
	buf.Reset()
	b = &bar{w: &buf, now: time.Now}
	b.Start("model.gguf", 10<<20, 100<<20)
	b.Update(60 << 20)
	b.Finish(nil)
	if out := buf.String(); strings.Contains(out, "\r") || strings.Count(out, "\n") != 2 || !strings.Contains(out, "resuming") {
		t.Errorf("bar off a terminal: %q", out)
	}
}
