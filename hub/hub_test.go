package hub_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"trit/hub"
	"trit/internal/hubtest"
)

func blob(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func newHub(t *testing.T) (*hubtest.Hub, *hub.Client) {
	h := hubtest.New(t)
	h.Add("prism-ml/Ternary-Bonsai-8B-gguf",
		hubtest.File{Path: ".gitattributes", Data: []byte("*.gguf filter=lfs\n")},
		hubtest.File{Path: "README.md", Data: []byte("# Ternary Bonsai 8B\n")},
		hubtest.File{Path: "Ternary-Bonsai-8B-Q2_0_g64.gguf", Data: blob(3000, 1), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-8B-PQ2_0.gguf", Data: blob(2800, 2), LFS: true},
		hubtest.File{Path: "Ternary-Bonsai-8B-Q2_0.gguf", Data: blob(2800, 3), LFS: true},
		hubtest.File{Path: "extra/notes.txt", Data: []byte("notes")},
	)
	return h, &hub.Client{Endpoint: h.URL}
}

func TestList(t *testing.T) {
	h, c := newHub(t)
	ctx := context.Background()
	commit, err := c.Commit(ctx, "prism-ml/Ternary-Bonsai-8B-gguf", "main")
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.List(ctx, "prism-ml/Ternary-Bonsai-8B-gguf", commit)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := ".gitattributes README.md Ternary-Bonsai-8B-Q2_0_g64.gguf Ternary-Bonsai-8B-PQ2_0.gguf Ternary-Bonsai-8B-Q2_0.gguf extra/notes.txt"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("files %s, want %s (directories dropped, every page read)", got, want)
	}
	sum := sha256.Sum256(blob(3000, 1))
	if f := files[2]; f.Size != 3000 || f.SHA256 != hex.EncodeToString(sum[:]) || !f.LFS() {
		t.Errorf("LFS file %+v: want its size and SHA-256, not the pointer's", f)
	}
	if f := files[1]; f.LFS() || f.Size != int64(len("# Ternary Bonsai 8B\n")) || len(f.OID) != 40 {
		t.Errorf("git file %+v", f)
	}
	pages := 0
	for _, r := range h.Requests() {
		if strings.Contains(r.Path, "/tree/") {
			pages++
		}
	}
	if pages != 4 { // 7 entries (one directory), 2 a page
		t.Errorf("%d listing pages fetched, want 4", pages)
	}
}

func TestOpenRedirectAndRange(t *testing.T) {
	h, c := newHub(t)
	data := blob(3000, 1)
	sum := sha256.Sum256(data)
	d, err := c.Open(context.Background(), "prism-ml/Ternary-Bonsai-8B-gguf", "main", "Ternary-Bonsai-8B-Q2_0_g64.gguf", 1234)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(d.Body)
	d.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[1234:]) || d.Offset != 1234 || d.Size != 3000 {
		t.Errorf("offset %d size %d, %d bytes: want the file from 1234 of 3000", d.Offset, d.Size, len(got))
	}
	if d.ETag != hex.EncodeToString(sum[:]) {
		t.Errorf("ETag %q: want the Hub's X-Linked-Etag (the SHA-256), not the CDN's", d.ETag)
	}
	if len(d.Commit) != 40 {
		t.Errorf("commit %q", d.Commit)
	}
	dl := h.Downloads("Ternary-Bonsai-8B-Q2_0_g64.gguf")
	if len(dl) != 2 || dl[0].Server != "hub" || dl[1].Server != "cdn" || dl[1].Range != "bytes=1234-" {
		t.Errorf("requests %+v: want the Hub, then the CDN with the Range", dl)
	}
	// A renamed repository answers with a relative redirect first; the tags
	// still come from the Hub's redirect to the CDN.
	h.Move("prism-ml/Ternary-Bonsai-8B-gguf", "prism-ml/Renamed-gguf")
	d, err = c.Open(context.Background(), "prism-ml/Ternary-Bonsai-8B-gguf", "main", "Ternary-Bonsai-8B-Q2_0_g64.gguf", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(d.Body)
	d.Body.Close()
	if !bytes.Equal(got, data) || d.ETag != hex.EncodeToString(sum[:]) || len(d.Commit) != 40 {
		t.Errorf("through a rename: %d bytes, ETag %q, commit %q", len(got), d.ETag, d.Commit)
	}
	h.Move("prism-ml/Renamed-gguf", "prism-ml/Ternary-Bonsai-8B-gguf")
	// A git-stored file comes from the Hub itself, tagged with its blob id.
	d, err = c.Open(context.Background(), "prism-ml/Ternary-Bonsai-8B-gguf", "main", "extra/notes.txt", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(d.Body)
	d.Body.Close()
	if string(got) != "notes" || len(d.ETag) != 40 || d.Offset != 0 {
		t.Errorf("notes.txt: %q, ETag %q, offset %d", got, d.ETag, d.Offset)
	}
}

func TestErrors(t *testing.T) {
	h, c := newHub(t)
	h.Add("acme/gated", hubtest.File{Path: "m-Q8_0.gguf", Data: blob(100, 9), LFS: true})
	h.RequireToken("acme/gated", "hf_good", true)
	h.Add("acme/private", hubtest.File{Path: "m-Q8_0.gguf", Data: blob(100, 9), LFS: true})
	h.RequireToken("acme/private", "hf_good", false)
	ctx := context.Background()
	withToken := func(tok string) *hub.Client { return &hub.Client{Endpoint: h.URL, Token: tok} }
	open := func(c *hub.Client, repo, file string) error {
		d, err := c.Open(ctx, repo, "main", file, 0)
		if err == nil {
			d.Body.Close()
		}
		return err
	}
	commit := func(c *hub.Client, repo string) error { _, err := c.Commit(ctx, repo, "main"); return err }
	for _, tc := range []struct {
		name  string
		err   error
		is    error
		texts []string
	}{
		{"unknown repo, anonymous", commit(c, "acme/nothing"), hub.ErrRepoNotFound, []string{"acme/nothing", "401", "HF_TOKEN"}},
		{"unknown repo, with token", commit(withToken("hf_good"), "acme/nothing"), hub.ErrRepoNotFound, []string{"404", "no such repository"}},
		{"private, anonymous", commit(c, "acme/private"), hub.ErrRepoNotFound, []string{"private or gated", "HF_TOKEN"}},
		{"private, bad token", commit(withToken("hf_bad"), "acme/private"), hub.ErrAuth, []string{"token in HF_TOKEN was refused"}},
		{"gated, anonymous", open(c, "acme/gated", "m-Q8_0.gguf"), hub.ErrAuth, []string{"401", "gated", "set HF_TOKEN"}},
		{"gated, token without access", open(withToken("hf_other"), "acme/gated", "m-Q8_0.gguf"), hub.ErrAuth, []string{"403", "not been granted"}},
		{"missing file", open(c, "prism-ml/Ternary-Bonsai-8B-gguf", "nope.gguf"), hub.ErrEntryNotFound, []string{"nope.gguf", "no such file"}},
		{"missing revision", func() error { _, err := c.Commit(ctx, "prism-ml/Ternary-Bonsai-8B-gguf", "v9"); return err }(), hub.ErrRevisionNotFound, []string{"revision"}},
		{"bad id", commit(c, "../etc"), hub.ErrBadRepoID, nil},
	} {
		if !errors.Is(tc.err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.is)
			continue
		}
		for _, s := range tc.texts {
			if !strings.Contains(tc.err.Error(), s) {
				t.Errorf("%s: %q lacks %q", tc.name, tc.err, s)
			}
		}
	}
	// With the right token, both work, and the token reaches the Hub.
	if err := open(withToken("hf_good"), "acme/gated", "m-Q8_0.gguf"); err != nil {
		t.Errorf("gated with token: %v", err)
	}
	dl := h.Downloads("m-Q8_0.gguf")
	if last := dl[len(dl)-1]; last.Server != "cdn" || last.Auth || !dl[len(dl)-2].Auth {
		t.Errorf("requests %+v: want the token at the Hub and not at the CDN", dl)
	}
	if err := commit(withToken("hf_good"), "acme/private"); err != nil {
		t.Errorf("private with token: %v", err)
	}
}

func TestNetworkDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := &hub.Client{Endpoint: "http://" + addr}
	_, err = c.Commit(context.Background(), "prism-ml/Ternary-Bonsai-8B-gguf", "main")
	if !errors.Is(err, hub.ErrNetwork) || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("%v: want ErrNetwork", err)
	}
}

// A server that sends headers and then nothing must not hang the client.
func TestStall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &hub.Client{Endpoint: srv.URL, StallTimeout: 100 * time.Millisecond}
	d, err := c.Open(context.Background(), "a/b", "main", "f.gguf", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Body.Close()
	t0 := time.Now()
	_, err = io.ReadAll(d.Body)
	if !errors.Is(err, hub.ErrNetwork) || !strings.Contains(err.Error(), "no data received") {
		t.Errorf("%v: want a stall error", err)
	}
	if time.Since(t0) > 10*time.Second {
		t.Errorf("stall detected after %v", time.Since(t0))
	}
}

func TestBadListing(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"escaping path", `[{"type":"file","oid":"` + strings.Repeat("a", 40) + `","size":1,"path":"../x"}]`},
		{"absolute path", `[{"type":"file","oid":"` + strings.Repeat("a", 40) + `","size":1,"path":"/etc/x"}]`},
		{"negative size", `[{"type":"file","oid":"` + strings.Repeat("a", 40) + `","size":-1,"path":"x"}]`},
		{"bad sha256", `[{"type":"file","oid":"` + strings.Repeat("a", 40) + `","size":1,"path":"x","lfs":{"oid":"zz","size":1}}]`},
		{"not json", `<html>`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, tc.body) }))
		_, err := (&hub.Client{Endpoint: srv.URL}).List(context.Background(), "a/b", "main")
		srv.Close()
		if !errors.Is(err, hub.ErrBadResponse) {
			t.Errorf("%s: %v, want ErrBadResponse", tc.name, err)
		}
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ in, repo, sel string }{
		{"prism-ml/Ternary-Bonsai-8B-gguf:PQ2_0", "prism-ml/Ternary-Bonsai-8B-gguf", "PQ2_0"},
		{"prism-ml/Ternary-Bonsai-8B-mlx-2bit", "prism-ml/Ternary-Bonsai-8B-mlx-2bit", ""},
		{"hf.co/prism-ml/Bonsai-8B-gguf:q1_0", "prism-ml/Bonsai-8B-gguf", "q1_0"},
		{"https://huggingface.co/a/b.c", "a/b.c", ""},
	} {
		repo, sel, err := hub.ParseRef(tc.in)
		if err != nil || repo != tc.repo || sel != tc.sel {
			t.Errorf("ParseRef(%q) = %q, %q, %v", tc.in, repo, sel, err)
		}
	}
	for _, bad := range []string{"", "noslash", "a/b/c", "../x", "a/..", "a/.hidden", "a b/c", "a/-x", "/b"} {
		if _, _, err := hub.ParseRef(bad); !errors.Is(err, hub.ErrBadRepoID) {
			t.Errorf("ParseRef(%q): %v, want ErrBadRepoID", bad, err)
		}
	}
}

func TestValidPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"model.gguf": true, "a/b/c.json": true, ".gitattributes": true,
		"": false, "/abs": false, "../up": false, "a/../b": false, "a//b": false, "a/./b": false,
		"a\\b": false, "c:x": false, "a/": false, ".": false, "..": false,
	} {
		if hub.ValidPath(p) != ok {
			t.Errorf("ValidPath(%q) = %v", p, !ok)
		}
	}
}

func TestQuant(t *testing.T) {
	for name, want := range map[string]string{
		"Ternary-Bonsai-8B-Q2_0_g64.gguf":          "Q2_0_g64",
		"Ternary-Bonsai-27B-Q2_g64.gguf":           "Q2_g64",
		"Ternary-Bonsai-2-27B-PTQ1_0.gguf":         "PTQ1_0",
		"Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf":    "Q8_0",
		"sub/Qwen3-8B.Q4_K_M.gguf":                 "Q4_K_M",
		"Big-Model-Q4_K_M-00001-of-00003.gguf":     "Q4_K_M",
		"plain.gguf":                               "plain",
		"Ternary-Bonsai-27B-dspark-Q4_1.gguf":      "Q4_1",
		"Ternary-Bonsai-1.7B-Q2_0.gguf":            "Q2_0",
		"Bonsai-8B-Q1_0.gguf":                      "Q1_0",
		"Ternary-Bonsai-2-27B-mmproj-BF16.gguf":    "BF16",
		"Ternary-Bonsai-2-27B-F16.gguf":            "F16",
		"Ternary-Bonsai-8B-mlx-2bit/config.json":   "config",
		"Ternary-Bonsai-8B-PQ2_0.GGUF":             "PQ2_0",
		"Ternary-Bonsai-4B-Q2_0_g64-v2-fix.gguf":   "fix",
		"no-extension":                             "extension",
		"Ternary-Bonsai-2-27B-mmproj-Q8_0.v2.gguf": "v2",
	} {
		if got := hub.Quant(name); got != want {
			t.Errorf("Quant(%q) = %q, want %q", name, got, want)
		}
	}
}

func files(names ...string) []hub.File {
	var fs []hub.File
	for _, n := range names {
		fs = append(fs, hub.File{Path: n, Size: 1, SHA256: strings.Repeat("0", 64)})
	}
	return fs
}

func TestChoose(t *testing.T) {
	v1 := files("README.md", "Ternary-Bonsai-8B-Q2_0_g64.gguf", "Ternary-Bonsai-8B-PQ2_0.gguf", "Ternary-Bonsai-8B-Q2_0.gguf", "Ternary-Bonsai-8B-F16.gguf")
	v2 := files("Ternary-Bonsai-2-27B-PQ2_0.gguf", "Ternary-Bonsai-2-27B-PTQ1_0.gguf", "Ternary-Bonsai-2-27B-F16.gguf",
		"Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf", "Ternary-Bonsai-2-27B-mmproj-BF16.gguf")
	mlx := files("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja", "hadamard.json")
	one := files("README.md", "Bonsai-8B-Q1_0.gguf")
	odd := files("a-Q4_K_S.gguf", "a-Q5_K_M.gguf")
	for _, tc := range []struct {
		name  string
		files []hub.File
		sel   string
		want  string // the picked file, or the error's sentinel
		dflt  bool
	}{
		{"exact quant", v1, "PQ2_0", "Ternary-Bonsai-8B-PQ2_0.gguf", false},
		{"case-insensitive", v1, "pq2_0", "Ternary-Bonsai-8B-PQ2_0.gguf", false},
		{"exact beats substring", v1, "q2_0", "Ternary-Bonsai-8B-Q2_0.gguf", false},
		{"substring of the quant", v1, "g64", "Ternary-Bonsai-8B-Q2_0_g64.gguf", false},
		{"file name", v1, "Ternary-Bonsai-8B-F16.gguf", "Ternary-Bonsai-8B-F16.gguf", false},
		{"several", v1, "Q2", "ambiguous", false},
		{"none", v1, "Q4_K_M", "nomatch", false},
		{"default v1", v1, "", "Ternary-Bonsai-8B-PQ2_0.gguf", true},
		{"default v2", v2, "", "Ternary-Bonsai-2-27B-PTQ1_0.gguf", true},
		{"mmproj is not a model", v2, "Q8_0", "nomatch", false},
		{"only one file", one, "", "Bonsai-8B-Q1_0.gguf", true},
		{"no default", odd, "", "ambiguous-or-none", true},
		{"pack", mlx, "", "pack", false},
		{"pack with selector", mlx, "config.json", "nomatch", false},
		{"empty repo", nil, "", "nomatch", false},
	} {
		p, err := hub.Choose("r/x", tc.files, tc.sel)
		switch tc.want {
		case "ambiguous":
			if !errors.Is(err, hub.ErrAmbiguous) || !strings.Contains(err.Error(), "Q2_0_g64") {
				t.Errorf("%s: %v, want ErrAmbiguous listing the matches", tc.name, err)
			}
		case "nomatch":
			if !errors.Is(err, hub.ErrNoMatch) {
				t.Errorf("%s: %v, want ErrNoMatch", tc.name, err)
			}
		case "ambiguous-or-none":
			if err == nil || !strings.Contains(err.Error(), "a-Q4_K_S.gguf") {
				t.Errorf("%s: %v, want an error listing the files", tc.name, err)
			}
		case "pack":
			if err != nil || !p.Pack || len(p.Files) != len(tc.files) || p.Tag != "" {
				t.Errorf("%s: %+v, %v: want every file", tc.name, p, err)
			}
		default:
			if err != nil || len(p.Files) != 1 || p.Files[0].Path != tc.want || p.Default != tc.dflt || p.Tag != hub.Quant(tc.want) {
				t.Errorf("%s: %+v, %v: want %s", tc.name, p, err, tc.want)
			}
		}
	}
	if err := func() error { _, err := hub.Choose("r/x", v1, "Q4_K_M"); return err }(); !strings.Contains(err.Error(), "Ternary-Bonsai-8B-PQ2_0.gguf") {
		t.Errorf("no-match error %q does not list the files", err)
	}
	for sel, want := range map[string]string{"": "Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf", "bf16": "Ternary-Bonsai-2-27B-mmproj-BF16.gguf"} {
		f, err := hub.ChooseMMProj("r/x", v2, sel)
		if err != nil || f.Path != want {
			t.Errorf("ChooseMMProj(%q) = %v, %v; want %s", sel, f.Path, err, want)
		}
	}
	if _, err := hub.ChooseMMProj("r/x", v1, ""); !errors.Is(err, hub.ErrNoMatch) {
		t.Errorf("no mmproj: %v", err)
	}
}

// Choose takes file names from any listing: it never panics, and what it
// picks is one of the files, with the quant Quant reads from its name.
func FuzzChoose(f *testing.F) {
	f.Add("Ternary-Bonsai-8B-PQ2_0.gguf\nTernary-Bonsai-8B-Q2_0_g64.gguf\nx-mmproj-Q8_0.gguf", "pq2")
	f.Add("a-00001-of-00002.gguf\na-00002-of-00002.gguf", "")
	f.Add("config.json\nmodel.safetensors", "")
	f.Fuzz(func(t *testing.T, names, sel string) {
		fs := files(strings.Split(names, "\n")...)
		p, err := hub.Choose("r/x", fs, sel)
		if err != nil {
			return
		}
		if p.Pack {
			if len(p.Files) != len(fs) {
				t.Fatalf("pack of %d files, listing has %d", len(p.Files), len(fs))
			}
			return
		}
		if len(p.Files) != 1 || p.Tag != hub.Quant(p.Files[0].Path) || !strings.Contains(names, p.Files[0].Path) {
			t.Fatalf("Choose(%q, %q) = %+v", names, sel, p)
		}
	})
}
