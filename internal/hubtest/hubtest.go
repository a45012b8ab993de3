// Package hubtest is a fake Hugging Face Hub for tests: the endpoints the
// hub package uses (revision info, the paginated tree listing, /resolve/
// with a redirect to a separate CDN server for LFS files, Range requests,
// the Hub's X-Linked-Etag/X-Linked-Size/X-Repo-Commit headers and
// X-Error-Code errors), with switches for the failures tests need:
// connections cut mid-file, corrupted content, tokens, held responses.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A File is one file of a fake repository.
type File struct {
	Path string
	Data []byte
	LFS  bool // served through the CDN redirect, listed with its SHA-256
}

// A Request is one request either server received.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string
	Range  string
	Auth   bool // carried an Authorization header
}

type repo struct {
	commit string
	files  []File
	sums   map[string]string // path → SHA-256 of the content, computed once
	token  string            // required token, if any
	gated  bool              // listing public, downloads need the token
}

// A Hub is the fake Hub and its CDN.
type Hub struct {
	// URL is the Hub's endpoint (for HF_ENDPOINT or hub.Client.Endpoint).
	URL string
	// PageSize is the number of entries per listing page.
	PageSize int

	hub, cdn *httptest.Server
	mu       sync.Mutex
	repos    map[string]*repo
	cuts     map[string]int64 // path → bytes to send before cutting, once
	corrupt  map[string]bool
	holds    map[string]*hold
	moved    map[string]string // old repository id → new
	reqs     []Request
}

type hold struct {
	arrived, release chan struct{}
	once             sync.Once
}

// New starts a fake Hub and CDN, closed when t ends.
func New(t testing.TB) *Hub {
	h := &Hub{PageSize: 2, repos: map[string]*repo{}, cuts: map[string]int64{},
		corrupt: map[string]bool{}, holds: map[string]*hold{}, moved: map[string]string{}}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.URL = h.hub.URL
	t.Cleanup(func() {
		h.mu.Lock()
		for _, hd := range h.holds {
			hd.once.Do(func() { close(hd.release) })
		}
		h.mu.Unlock()
		h.hub.Close()
		h.cdn.Close()
	})
	return h
}

// Add creates (or replaces) repository id with files.
func (h *Hub) Add(id string, files ...File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sum := sha1.Sum([]byte(id + strconv.Itoa(len(h.repos))))
	rp := &repo{commit: hex.EncodeToString(sum[:]), files: files, sums: map[string]string{}}
	for _, f := range files {
		rp.sums[f.Path] = sha(f.Data)
	}
	h.repos[id] = rp
}

// RequireToken makes repository id private (every request needs token) or,
// with gated, gated (downloads need token).
func (h *Hub) RequireToken(id, token string, gated bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[id].token, h.repos[id].gated = token, gated
}

// Move renames repository from to to; requests for from get the Hub's
// relative 307 redirect to to.
func (h *Hub) Move(from, to string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[to] = h.repos[from]
	delete(h.repos, from)
	delete(h.moved, to)
	h.moved[from] = to
}

// CutAfter makes the next download of path send n bytes and then drop the
// connection.
func (h *Hub) CutAfter(path string, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cuts[path] = n
}

// Corrupt makes downloads of path send content that differs from the
// listing's checksum in one byte.
func (h *Hub) Corrupt(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.corrupt[path] = true
}

// Hold makes downloads of path wait until release is called; arrived is
// closed when the first download request for it comes in.
func (h *Hub) Hold(path string) (arrived <-chan struct{}, release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := &hold{arrived: make(chan struct{}), release: make(chan struct{})}
	h.holds[path] = hd
	return hd.arrived, func() { hd.once.Do(func() { close(hd.release) }) }
}

// Requests returns the requests received so far.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.reqs...)
}

// Downloads returns the content requests (Hub /resolve/ answered with data,
// or CDN) received for path.
func (h *Hub) Downloads(path string) []Request {
	var out []Request
	for _, r := range h.Requests() {
		if (r.Server == "cdn" && r.Path == "/"+path) || (r.Server == "hub" && strings.HasSuffix(r.Path, "/"+path) && strings.Contains(r.Path, "/resolve/")) {
			out = append(out, r)
		}
	}
	return out
}

func (h *Hub) record(server string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = append(h.reqs, Request{Server: server, Method: r.Method, Path: r.URL.Path,
		Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization") != ""})
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", msg)
	http.Error(w, msg, status)
}

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 6)
	var id, kind string
	var rest []string
	switch {
	case len(parts) >= 5 && parts[0] == "api" && parts[1] == "models":
		id, kind, rest = parts[2]+"/"+parts[3], parts[4], parts[5:]
	case len(parts) >= 4 && parts[2] == "resolve":
		id, kind = parts[0]+"/"+parts[1], "resolve"
		rest = strings.SplitN(strings.Join(parts[3:], "/"), "/", 2)
	default:
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	rp, to := h.repos[id], h.moved[id]
	h.mu.Unlock()
	if to != "" {
		u := *r.URL
		u.Path = strings.Replace(u.Path, "/"+id+"/", "/"+to+"/", 1)
		w.Header().Set("Location", u.RequestURI()) // relative, as the Hub sends it
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	authed := r.Header.Get("Authorization") != ""
	if rp == nil {
		// Like the Hub: anonymous requests for a missing repository get 401,
		// since the repository might be private.
		if authed {
			hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		} else {
			hubError(w, http.StatusUnauthorized, "RepoNotFound", "Repository not found")
		}
		return
	}
	if rp.token != "" && (!rp.gated || kind == "resolve") && r.Header.Get("Authorization") != "Bearer "+rp.token {
		switch {
		case rp.gated && !authed:
			hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it.")
		case rp.gated:
			hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+id+" is restricted and you are not in the authorized list.")
		case authed:
			hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		default:
			hubError(w, http.StatusUnauthorized, "RepoNotFound", "Repository not found")
		}
		return
	}
	if len(rest) == 0 || (rest[0] != "main" && rest[0] != rp.commit) {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id")
		return
	}
	switch kind {
	case "revision":
		h.serveRevision(w, id, rp)
	case "tree":
		h.serveTree(w, r, rp)
	case "resolve":
		if len(rest) < 2 {
			http.NotFound(w, r)
			return
		}
		h.serveResolve(w, r, rp, rest[1])
	default:
		http.NotFound(w, r)
	}
}

func (h *Hub) serveRevision(w http.ResponseWriter, id string, rp *repo) {
	type sibling struct {
		Name string `json:"rfilename"`
	}
	info := struct {
		ID       string    `json:"id"`
		SHA      string    `json:"sha"`
		Siblings []sibling `json:"siblings"`
	}{ID: id, SHA: rp.commit}
	for _, f := range rp.files {
		info.Siblings = append(info.Siblings, sibling{f.Path})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(info)
}

// An entry is a tree listing entry, in the Hub's JSON shape.
type entry struct {
	Type string    `json:"type"`
	OID  string    `json:"oid"`
	Size int64     `json:"size"`
	Path string    `json:"path"`
	LFS  *lfsEntry `json:"lfs,omitempty"`
}

type lfsEntry struct {
	OID         string `json:"oid"`
	Size        int64  `json:"size"`
	PointerSize int64  `json:"pointerSize"`
}

func gitOID(data []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(data))
	s.Write(data)
	return hex.EncodeToString(s.Sum(nil))
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// pointer is the git LFS pointer file that git stores for an LFS file.
func pointer(sum string, size int) []byte {
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sum, size)
}

func (h *Hub) serveTree(w http.ResponseWriter, r *http.Request, rp *repo) {
	var all []entry
	dirs := map[string]bool{}
	for _, f := range rp.files {
		for i, c := range f.Path {
			if d := f.Path[:i]; c == '/' && !dirs[d] {
				dirs[d] = true
				all = append(all, entry{Type: "directory", OID: gitOID([]byte(d)), Path: d})
			}
		}
		e := entry{Type: "file", Path: f.Path, Size: int64(len(f.Data))}
		if f.LFS {
			p := pointer(rp.sums[f.Path], len(f.Data))
			e.Size, e.OID = int64(len(p)), gitOID(p)
			e.LFS = &lfsEntry{OID: rp.sums[f.Path], Size: int64(len(f.Data)), PointerSize: int64(len(p))}
		} else {
			e.OID = gitOID(f.Data)
		}
		all = append(all, e)
	}
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	end := min(start+h.PageSize, len(all))
	start = min(start, end)
	if end < len(all) {
		q := r.URL.Query()
		q.Set("cursor", strconv.Itoa(end))
		next := "http://" + r.Host + r.URL.Path + "?" + q.Encode()
		w.Header().Set("Link", `<`+next+`>; rel="next"`)
	}
	w.Header().Set("Content-Type", "application/json")
	page := all[start:end]
	if page == nil {
		page = []entry{}
	}
	json.NewEncoder(w).Encode(page)
}

func (rp *repo) file(path string) *File {
	for i := range rp.files {
		if rp.files[i].Path == path {
			return &rp.files[i]
		}
	}
	return nil
}

func (h *Hub) serveResolve(w http.ResponseWriter, r *http.Request, rp *repo, path string) {
	f := rp.file(path)
	if f == nil {
		hubError(w, http.StatusNotFound, "EntryNotFound", path+" does not exist on \"main\"")
		return
	}
	w.Header().Set("X-Repo-Commit", rp.commit)
	if f.LFS {
		// The Hub answers LFS files with a redirect to a signed CDN URL and
		// tags the file with its SHA-256 and size.
		w.Header().Set("X-Linked-Etag", `"`+rp.sums[path]+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(f.Data)))
		w.Header().Set("ETag", `"`+gitOID(pointer(rp.sums[path], len(f.Data)))+`"`)
		http.Redirect(w, r, h.cdn.URL+"/"+path+"?X-Amz-Signature=fake&X-Amz-Expires=3600", http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+gitOID(f.Data)+`"`)
	h.serveData(w, r, path, f.Data)
}

func (h *Hub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	if r.URL.Query().Get("X-Amz-Signature") == "" {
		http.Error(w, "unsigned", http.StatusForbidden)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	h.mu.Lock()
	var f *File
	var sum string
	for _, rp := range h.repos {
		if f = rp.file(path); f != nil {
			sum = rp.sums[path]
			break
		}
	}
	h.mu.Unlock()
	if f == nil {
		http.NotFound(w, r)
		return
	}
	// A CDN's own entity tag, unrelated to the Hub's.
	w.Header().Set("ETag", `"cdn-`+sum[:12]+`"`)
	h.serveData(w, r, path, f.Data)
}

// serveData serves data with Range support, applying the hold, cut and
// corruption switches for path.
func (h *Hub) serveData(w http.ResponseWriter, r *http.Request, path string, data []byte) {
	h.mu.Lock()
	hd := h.holds[path]
	cut, hasCut := h.cuts[path]
	delete(h.cuts, path)
	if h.corrupt[path] {
		data = bytes.Clone(data)
		data[len(data)/2] ^= 0xff
	}
	h.mu.Unlock()
	if hd != nil {
		select {
		case <-hd.arrived:
		default:
			close(hd.arrived)
		}
		select {
		case <-hd.release:
		case <-r.Context().Done():
			return
		case <-time.After(time.Minute):
		}
	}
	if !hasCut {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
		return
	}
	// Announce the whole body, send part of it, then drop the connection.
	start := int64(0)
	if rg := r.Header.Get("Range"); rg != "" {
		start, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
		w.Header().Set("Content-Length", strconv.FormatInt(int64(len(data))-start, 10))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
	}
	w.Write(data[start:min(start+cut, int64(len(data)))])
	w.(http.Flusher).Flush()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	// Half-close first and wait for the client to hang up, so that the
	// bytes sent all arrive (an abrupt close could reset the connection
	// and lose some in flight).
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.CloseWrite()
		tc.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, tc)
	}
	conn.Close()
}
