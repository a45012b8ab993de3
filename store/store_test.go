package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"trit/hub"
	"trit/internal/hubtest"
)

func blob(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>8) ^ seed
	}
	return b
}

const (
	v1 = "prism-ml/Ternary-Bonsai-8B-gguf"
	v2 = "prism-ml/Ternary-Bonsai-2-27B-gguf"
	mx = "prism-ml/Ternary-Bonsai-8B-mlx-2bit"
)

// fixture is a fake Hub with Prism-like repositories and an empty store.
type fixture struct {
	hub   *hubtest.Hub
	c     *hub.Client
	s     *Store
	files map[string][]byte
	log   *logBuf
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newFixture(t *testing.T) *fixture {
	h := hubtest.New(t)
	fx := &fixture{hub: h, c: &hub.Client{Endpoint: h.URL}, files: map[string][]byte{}, log: &logBuf{}}
	add := func(repo string, files ...hubtest.File) {
		for _, f := range files {
			fx.files[f.Path] = f.Data
		}
		h.Add(repo, files...)
	}
	add(v1,
		hubtest.File{Path: "README.md", Data: []byte("# Ternary Bonsai 8B\n")},
		hubtest.File{Path: "Ternary-Bonsai-8B-Q2_0_g64.gguf", Data: blob(5000, 1), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-8B-PQ2_0.gguf", Data: blob(3<<20+123, 2), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-8B-Q2_0.gguf", Data: blob(4400, 3), LFS: true})
	add(v2,
		hubtest.File{Path: "Ternary-Bonsai-2-27B-PQ2_0.gguf", Data: blob(6000, 4), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-2-27B-PTQ1_0.gguf", Data: blob(5000, 5), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf", Data: blob(700, 6), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-2-27B-mmproj-BF16.gguf", Data: blob(900, 7), LFS: true})
	add(mx,
		hubtest.File{Path: "config.json", Data: []byte(`{"model_type":"qwen3","quantization":{"bits":2,"group_size":128}}`)},
		hubtest.File{Path: "model.safetensors", Data: blob(9000, 8), LFS: true},
		hubtest.File{Path: "tokenizer.json", Data: []byte(`{"model":{}}`)},
		hubtest.File{Path: "chat_template.jinja", Data: []byte("{{ messages }}")},
		hubtest.File{Path: "hadamard.json", Data: []byte(`{"size":1024}`)},
		hubtest.File{Path: "runtime/generate.py", Data: []byte("print()\n")})
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx.s = s
	return fx
}

func (fx *fixture) opts() PullOptions {
	return PullOptions{Log: fx.log.logf, RetryWait: time.Millisecond}
}

func (fx *fixture) checkFile(t *testing.T, m *Model, file string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(fx.s.Dir, "files", filepath.FromSlash(m.Repo), filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fx.files[file]) {
		t.Errorf("%s: content differs (%d bytes, want %d)", file, len(got), len(fx.files[file]))
	}
}

// partials returns the files under partial/.
func (fx *fixture) partials(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	filepath.WalkDir(filepath.Join(fx.s.Dir, "partial"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			st, _ := d.Info()
			out[filepath.Base(p)] = st.Size()
		}
		return nil
	})
	return out
}

func TestPull(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	m, err := fx.s.Pull(ctx, fx.c, v1+":pq2_0", fx.opts())
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != v1+":PQ2_0" || m.File != "Ternary-Bonsai-8B-PQ2_0.gguf" || m.Pack || len(m.Revision) != 40 {
		t.Errorf("model %+v", m)
	}
	fx.checkFile(t, m, m.File)
	if m.Path() != filepath.Join(fx.s.Dir, "files", "prism-ml", "Ternary-Bonsai-8B-gguf", "Ternary-Bonsai-8B-PQ2_0.gguf") {
		t.Errorf("path %s", m.Path())
	}
	if p := fx.partials(t); len(p) != 0 {
		t.Errorf("partial files left: %v", p)
	}
	for _, name := range []string{v1 + ":PQ2_0", v1 + ":pq2_0", v1, v1 + ":Ternary-Bonsai-8B-PQ2_0.gguf", "hf.co/" + v1 + ":PQ2_0"} {
		got, err := fx.s.Find(name)
		if err != nil || got.Path() != m.Path() {
			t.Errorf("Find(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := fx.s.Find(v1 + ":Q2_0"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), v1+":PQ2_0") {
		t.Errorf("Find of an unpulled quant: %v, want ErrNotFound naming what is pulled", err)
	}
	// Pulling again downloads nothing.
	before := len(fx.hub.Downloads(m.File))
	if _, err := fx.s.Pull(ctx, fx.c, v1+":PQ2_0", fx.opts()); err != nil {
		t.Fatal(err)
	}
	if after := len(fx.hub.Downloads(m.File)); after != before {
		t.Errorf("second pull downloaded again (%d → %d requests)", before, after)
	}
	// A second quant of the same repository: now the bare name is ambiguous.
	if _, err := fx.s.Pull(ctx, fx.c, v1+":Q2_0_g64", fx.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.s.Find(v1); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Find(repo) with two pulled: %v, want ErrAmbiguous", err)
	}
	list, err := fx.s.List()
	if err != nil || len(list) != 2 || list[0].Name() != v1+":PQ2_0" || list[1].Name() != v1+":Q2_0_g64" {
		t.Errorf("List = %v, %v", list, err)
	}
}

// A renamed repository answers with relative redirects; the pull follows
// them, and the ETag check still sees the Hub's tags.
func TestPullMoved(t *testing.T) {
	fx := newFixture(t)
	fx.hub.Move(v1, "prism-ml/Renamed-gguf")
	m, err := fx.s.Pull(context.Background(), fx.c, v1+":PQ2_0", fx.opts())
	if err != nil {
		t.Fatal(err)
	}
	fx.checkFile(t, m, m.File)
}

func TestPullDefaultAndMMProj(t *testing.T) {
	fx := newFixture(t)
	m, err := fx.s.Pull(context.Background(), fx.c, v2, fx.opts())
	if err != nil {
		t.Fatal(err)
	}
	if m.Tag != "PTQ1_0" || m.MMProj != "" || len(m.Files) != 1 {
		t.Errorf("default pull: %+v", m)
	}
	log := fx.log.String()
	for _, want := range []string{"taking PTQ1_0, the default", "also has PQ2_0;", "add --mmproj"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	o := fx.opts()
	o.MMProj = true
	m, err = fx.s.Pull(context.Background(), fx.c, v2+":PQ2_0", o)
	if err != nil {
		t.Fatal(err)
	}
	if m.MMProj != "Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf" || len(m.Files) != 2 {
		t.Errorf("--mmproj pull: %+v", m)
	}
	fx.checkFile(t, m, m.MMProj)
	if m.MMProjPath() == "" || m.Size() != 6000+700 {
		t.Errorf("mmproj path %q, size %d", m.MMProjPath(), m.Size())
	}
	o.MMProjSel = "BF16"
	if _, err := fx.s.Pull(context.Background(), fx.c, v1, o); !errors.Is(err, hub.ErrNoMatch) {
		t.Errorf("--mmproj on a repository without one: %v", err)
	}
}

func TestPullResume(t *testing.T) {
	fx := newFixture(t)
	file := "Ternary-Bonsai-8B-Q2_0_g64.gguf"
	fx.hub.CutAfter(file, 1000)
	o := fx.opts()
	o.Attempts = 1
	_, err := fx.s.Pull(context.Background(), fx.c, v1+":Q2_0_g64", o)
	if !errors.Is(err, hub.ErrNetwork) || !strings.Contains(err.Error(), "1000 B of 5000 B kept") {
		t.Fatalf("cut connection: %v", err)
	}
	if !strings.Contains(err.Error(), "resumes") {
		t.Errorf("error %q does not say the pull can be resumed", err)
	}
	p := fx.partials(t)
	if len(p) != 1 {
		t.Fatalf("partials %v: want the cut download kept", p)
	}
	for _, n := range p {
		if n != 1000 {
			t.Errorf("partial holds %d bytes, want the 1000 received", n)
		}
	}
	if _, err := fx.s.Find(v1); !errors.Is(err, ErrNotFound) {
		t.Errorf("a partial pull is listed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fx.s.Dir, "files", "prism-ml", "Ternary-Bonsai-8B-gguf", file)); err == nil {
		t.Error("the partial download is in files/")
	}
	meter := &cancelMeter{cancel: func() {}}
	o.Meter = meter
	m, err := fx.s.Pull(context.Background(), fx.c, v1+":Q2_0_g64", o)
	if err != nil {
		t.Fatal(err)
	}
	fx.checkFile(t, m, file)
	if len(meter.starts) != 1 || meter.starts[0] != 1000 || len(meter.errs) != 1 || meter.errs[0] != nil {
		t.Errorf("meter starts %v, ends %v: want one start at 1000 and a clean finish", meter.starts, meter.errs)
	}
	dl := fx.hub.Downloads(file)
	if last := dl[len(dl)-1]; last.Server != "cdn" || last.Range != "bytes=1000-" {
		t.Errorf("resume request %+v: want Range bytes=1000- at the CDN", last)
	}
}

// A cut connection is retried within one pull, resuming each time.
func TestPullRetry(t *testing.T) {
	fx := newFixture(t)
	file := "Ternary-Bonsai-8B-PQ2_0.gguf"
	fx.hub.CutAfter(file, 2<<20)
	m, err := fx.s.Pull(context.Background(), fx.c, v1+":PQ2_0", fx.opts())
	if err != nil {
		t.Fatal(err)
	}
	fx.checkFile(t, m, file)
	var cdn []hubtest.Request
	for _, r := range fx.hub.Downloads(file) {
		if r.Server == "cdn" {
			cdn = append(cdn, r)
		}
	}
	if len(cdn) != 2 || cdn[0].Range != "" || cdn[1].Range != fmt.Sprintf("bytes=%d-", 2<<20) {
		t.Errorf("CDN requests %+v: want a full one, then a resume from the cut", cdn)
	}
	for _, r := range cdn {
		if r.Auth {
			t.Error("the token went to the CDN")
		}
	}
}

func TestPullChecksum(t *testing.T) {
	fx := newFixture(t)
	fx.hub.Corrupt("Ternary-Bonsai-8B-Q2_0.gguf")
	_, err := fx.s.Pull(context.Background(), fx.c, v1+":Q2_0", fx.opts())
	var ce *ChecksumError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) || ce.Kind != "SHA-256" || !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("%v: want a ChecksumError", err)
	}
	if p := fx.partials(t); len(p) != 0 {
		t.Errorf("corrupt download kept: %v", p)
	}
	if _, err := fx.s.Find(v1); !errors.Is(err, ErrNotFound) {
		t.Errorf("corrupt model listed: %v", err)
	}
	// Files stored in git are checked by their blob id.
	fx.hub.Corrupt("tokenizer.json")
	_, err = fx.s.Pull(context.Background(), fx.c, mx, fx.opts())
	if !errors.As(err, &ce) || ce.Kind != "git blob id" || ce.File != "tokenizer.json" {
		t.Errorf("%v: want a git blob id mismatch for tokenizer.json", err)
	}
}

func TestPullErrors(t *testing.T) {
	fx := newFixture(t)
	fx.hub.Add("acme/gated", hubtest.File{Path: "m-Q8_0.gguf", Data: blob(100, 9), LFS: true})
	fx.hub.RequireToken("acme/gated", "hf_secret", true)
	ctx := context.Background()
	if _, err := fx.s.Pull(ctx, fx.c, "acme/missing", fx.opts()); !errors.Is(err, hub.ErrRepoNotFound) {
		t.Errorf("unknown repo: %v", err)
	}
	if _, err := fx.s.Pull(ctx, fx.c, v1+":Q4_K_M", fx.opts()); !errors.Is(err, hub.ErrNoMatch) || !strings.Contains(err.Error(), "Ternary-Bonsai-8B-PQ2_0.gguf") {
		t.Errorf("no matching file: %v", err)
	}
	if _, err := fx.s.Pull(ctx, fx.c, v1+":Q2", fx.opts()); !errors.Is(err, hub.ErrAmbiguous) {
		t.Errorf("several matching files: %v", err)
	}
	_, err := fx.s.Pull(ctx, fx.c, "acme/gated", fx.opts())
	if !errors.Is(err, hub.ErrAuth) || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("gated without token: %v", err)
	}
	if m, err := fx.s.Pull(ctx, &hub.Client{Endpoint: fx.c.Endpoint, Token: "hf_secret"}, "acme/gated", fx.opts()); err != nil || m.Tag != "Q8_0" {
		t.Errorf("gated with token: %v, %v", m, err)
	}
	if _, err := fx.s.Pull(ctx, fx.c, "not a repo", fx.opts()); !errors.Is(err, hub.ErrBadRepoID) {
		t.Errorf("bad name: %v", err)
	}
	if p := fx.partials(t); len(p) != 0 {
		t.Errorf("failed pulls left partial files: %v", p)
	}
}

func TestPullSpace(t *testing.T) {
	fx := newFixture(t)
	fx.s.freeSpace = func(string) (int64, bool, error) { return 4000, true, nil }
	_, err := fx.s.Pull(context.Background(), fx.c, v1+":Q2_0_g64", fx.opts())
	var se *SpaceError
	if !errors.As(err, &se) || !errors.Is(err, ErrNoSpace) || se.Need != 5000 || se.Free != 4000 {
		t.Fatalf("%v: want a SpaceError for 5000 bytes", err)
	}
	if n := len(fx.hub.Downloads("Ternary-Bonsai-8B-Q2_0_g64.gguf")); n != 0 {
		t.Errorf("%d download requests before the space check failed", n)
	}
	// The check counts only what is still missing: with 1000 bytes of a
	// partial download there, 4000 free bytes are enough.
	fx.hub.CutAfter("Ternary-Bonsai-8B-Q2_0_g64.gguf", 1000)
	fx.s.freeSpace = diskFree
	o := fx.opts()
	o.Attempts = 1
	fx.s.Pull(context.Background(), fx.c, v1+":Q2_0_g64", o)
	fx.s.freeSpace = func(string) (int64, bool, error) { return 4000, true, nil }
	if _, err := fx.s.Pull(context.Background(), fx.c, v1+":Q2_0_g64", o); err != nil {
		t.Errorf("resume with enough space for the rest: %v", err)
	}
}

// cancelMeter records the starts and ends it is told of and calls cancel
// at each progress report (to stop the pull there, as Ctrl-C would).
type cancelMeter struct {
	cancel context.CancelFunc
	starts []int64
	errs   []error
}

func (m *cancelMeter) Start(_ string, have, _ int64) { m.starts = append(m.starts, have) }
func (m *cancelMeter) Update(int64)                  { m.cancel() }
func (m *cancelMeter) Finish(err error)              { m.errs = append(m.errs, err) }

func TestPullInterrupt(t *testing.T) {
	fx := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := fx.opts()
	meter := &cancelMeter{cancel: cancel}
	o.Meter = meter
	_, err := fx.s.Pull(ctx, fx.c, v1+":PQ2_0", o)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "resumes") {
		t.Fatalf("%v: want context.Canceled and a hint that the pull resumes", err)
	}
	var kept int64
	for _, n := range fx.partials(t) {
		kept = n
	}
	if kept <= 0 || kept >= 3<<20+123 {
		t.Fatalf("partial holds %d bytes: want part of the file", kept)
	}
	o.Meter = nil
	m, err := fx.s.Pull(context.Background(), fx.c, v1+":PQ2_0", o)
	if err != nil {
		t.Fatal(err)
	}
	fx.checkFile(t, m, m.File)
	dl := fx.hub.Downloads(m.File)
	if last := dl[len(dl)-1]; last.Range != fmt.Sprintf("bytes=%d-", kept) {
		t.Errorf("resume request %+v, want from %d", last, kept)
	}
}

// Two pulls of one file: the second waits for the first's lock, then finds
// the file complete and downloads nothing.
func TestPullConcurrent(t *testing.T) {
	fx := newFixture(t)
	file := "Ternary-Bonsai-8B-PQ2_0.gguf"
	arrived, release := fx.hub.Hold(file)
	type result struct {
		m   *Model
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		m, err := fx.s.Pull(context.Background(), fx.c, v1+":PQ2_0", fx.opts())
		first <- result{m, err}
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the first pull never reached the CDN")
	}
	log2 := &logBuf{}
	// The second pull goes through its own Store value, as another process
	// would.
	s2, err := Open(fx.s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		m, err := s2.Pull(context.Background(), fx.c, v1+":pq2_0", PullOptions{Log: log2.logf})
		second <- result{m, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log2.String(), "waiting for another pull"); {
		if time.Now().After(deadline) {
			t.Fatalf("the second pull did not wait for the first:\n%s", log2)
		}
		time.Sleep(5 * time.Millisecond)
	}
	release()
	r1, r2 := <-first, <-second
	if r1.err != nil || r2.err != nil {
		t.Fatalf("pulls: %v, %v", r1.err, r2.err)
	}
	fx.checkFile(t, r1.m, file)
	var cdn int
	for _, r := range fx.hub.Downloads(file) {
		if r.Server == "cdn" {
			cdn++
		}
	}
	if cdn != 1 {
		t.Errorf("%d CDN downloads of the file, want 1", cdn)
	}
	if list, _ := fx.s.List(); len(list) != 1 {
		t.Errorf("List = %v: want one model", list)
	}
}

func TestPullPack(t *testing.T) {
	fx := newFixture(t)
	m, err := fx.s.Pull(context.Background(), fx.c, mx, fx.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !m.Pack || m.Tag != "" || m.Name() != mx || len(m.Files) != 6 {
		t.Errorf("pack %+v", m)
	}
	for _, f := range m.Files {
		fx.checkFile(t, m, f.Path)
	}
	if m.Path() != filepath.Join(fx.s.Dir, "files", "prism-ml", "Ternary-Bonsai-8B-mlx-2bit") {
		t.Errorf("pack path %s", m.Path())
	}
	if _, err := os.Stat(filepath.Join(m.Path(), "runtime", "generate.py")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(fx.log.String(), "whole pack (6 files)") {
		t.Errorf("log:\n%s", fx.log)
	}
	if got, err := fx.s.Find(mx); err != nil || got.Path() != m.Path() {
		t.Errorf("Find(pack) = %v, %v", got, err)
	}
	if _, err := fx.s.Pull(context.Background(), fx.c, mx+":config.json", fx.opts()); !errors.Is(err, hub.ErrNoMatch) {
		t.Errorf("pack with a selector: %v", err)
	}
}

// A pack interrupted after some files were complete resumes without
// downloading those again (they are verified by their checksum).
func TestPullPackResume(t *testing.T) {
	fx := newFixture(t)
	fx.hub.CutAfter("model.safetensors", 100)
	o := fx.opts()
	o.Attempts = 1
	if _, err := fx.s.Pull(context.Background(), fx.c, mx, o); err == nil {
		t.Fatal("cut pull succeeded")
	}
	before := len(fx.hub.Downloads("config.json"))
	if _, err := fx.s.Pull(context.Background(), fx.c, mx, o); err != nil {
		t.Fatal(err)
	}
	if after := len(fx.hub.Downloads("config.json")); after != before {
		t.Errorf("config.json downloaded again (%d → %d)", before, after)
	}
}

func TestRemoveAndTouch(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.opts()
	o.MMProj = true
	a, err := fx.s.Pull(ctx, fx.c, v2+":PQ2_0", o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fx.s.Pull(ctx, fx.c, v2+":PTQ1_0", o)
	if err != nil {
		t.Fatal(err)
	}
	old := b.LastUsed
	time.Sleep(2 * time.Millisecond)
	if err := fx.s.Touch(b); err != nil {
		t.Fatal(err)
	}
	got, _ := fx.s.Find(v2 + ":PTQ1_0")
	if !got.LastUsed.After(old) {
		t.Errorf("Touch did not move last used: %v → %v", old, got.LastUsed)
	}
	gone, err := fx.s.Remove(v2 + ":pq2_0")
	if err != nil || gone.Tag != "PQ2_0" {
		t.Fatalf("Remove: %v, %v", gone, err)
	}
	if _, err := os.Stat(a.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed model's file remains: %v", err)
	}
	if _, err := os.Stat(b.MMProjPath()); err != nil {
		t.Errorf("the projector the other model uses was removed: %v", err)
	}
	if _, err := fx.s.Remove(v2 + ":PQ2_0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := fx.s.Remove(v2); err != nil {
		t.Fatal(err)
	}
	if list, err := fx.s.List(); err != nil || len(list) != 0 {
		t.Errorf("List after removing all = %v, %v", list, err)
	}
	if _, err := os.Stat(filepath.Join(fx.s.Dir, "files", "prism-ml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directories left: %v", err)
	}
}

func TestBadManifest(t *testing.T) {
	fx := newFixture(t)
	p := fx.s.manifestPath("acme/x")
	os.MkdirAll(filepath.Dir(p), 0o755)
	for _, body := range []string{`{`, `{"repo":"acme/y","models":[]}`, `{"repo":"acme/x","models":[null]}`,
		`{"repo":"acme/x","models":[{"tag":"Q","file":"../../../etc/passwd","files":[]}]}`} {
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := fx.s.Find("acme/x"); !errors.Is(err, ErrManifest) {
			t.Errorf("manifest %s: %v, want ErrManifest", body, err)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("TRIT_MODELS", "/models/here")
	if d, err := DefaultDir(); err != nil || d != "/models/here" {
		t.Errorf("DefaultDir with TRIT_MODELS = %q, %v", d, err)
	}
	t.Setenv("TRIT_MODELS", "")
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory here")
	}
	if d, err := DefaultDir(); err != nil || d != filepath.Join(cache, "trit", "models") {
		t.Errorf("DefaultDir = %q, %v", d, err)
	}
}

func TestDiskFree(t *testing.T) {
	free, ok, err := diskFree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ok && free <= 0 {
		t.Errorf("free space %d", free)
	}
}

// BenchmarkPull pulls a 64 MiB LFS file from the fake Hub over loopback:
// the client's own cost (HTTP, SHA-256, writing), with no network in it.
func BenchmarkPull(b *testing.B) {
	h := hubtest.New(b)
	data := blob(64<<20, 1)
	h.Add("acme/big", hubtest.File{Path: "big-Q2_0.gguf", Data: data, LFS: true})
	c := &hub.Client{Endpoint: h.URL}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Pull(context.Background(), c, "acme/big", PullOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
