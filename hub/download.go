package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Download is the body of a file being downloaded.
type Download struct {
	// Body yields the file's bytes from Offset on. Reads that see no data
	// for the client's StallTimeout fail.
	Body io.ReadCloser
	// Offset is where Body starts: the offset asked for, or 0 when the
	// server ignored the Range request and sends the whole file.
	Offset int64
	// Size is the whole file's size as the server reports it, or -1.
	Size int64
	// ETag is the Hub's entity tag for the file, without quotes: the
	// SHA-256 for LFS files (X-Linked-Etag), the git blob id otherwise.
	ETag string
	// Commit is the commit the Hub resolved the revision to.
	Commit string
}

// maxRedirects bounds the redirect chain (Hub, then CDN).
const maxRedirects = 10

// Open starts downloading file of repo at revision from offset on, through
// /resolve/ and whatever redirects it answers with.
func (c *Client) Open(ctx context.Context, repo, revision, file string, offset int64) (*Download, error) {
	if err := ValidRepoID(repo); err != nil {
		return nil, err
	}
	if !ValidPath(file) {
		return nil, fmt.Errorf("%w: unsafe file path %q", ErrBadResponse, file)
	}
	u := c.Endpoint + "/" + repo + "/resolve/" + escapePath(revision) + "/" + escapePath(file)
	hdr := http.Header{}
	// Compression would hide the real byte counts Range works with.
	hdr.Set("Accept-Encoding", "identity")
	if offset > 0 {
		hdr.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	// The Hub's own answer (the redirect to the CDN) carries the file's
	// tags; the CDN's answer has tags of its own. Keep the first hop that
	// names the commit (a renamed repository's relative redirect does not).
	var first http.Header
	checkRedirect := func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errTooManyRedirects
		}
		if first == nil && req.Response != nil && req.Response.Header.Get("X-Repo-Commit") != "" {
			first = req.Response.Header
		}
		// The CDN gets a signed URL and no token: like the Hub's own
		// clients, send the token to the host it was given for only (Go
		// would also send it to subdomains, such as cdn-lfs.huggingface.co).
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	resp, err := c.get(ctx, u, repo, file, hdr, checkRedirect)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	if first == nil {
		first = resp.Header
	}
	d := &Download{Size: -1, Commit: first.Get("X-Repo-Commit"),
		ETag: normalizeETag(firstOf(first.Get("X-Linked-Etag"), first.Get("ETag")))}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			resp.Body.Close()
			cancel(nil)
			return nil, fmt.Errorf("%w: %s: asked for bytes from %d, got Content-Range %q", ErrBadResponse, file, offset, resp.Header.Get("Content-Range"))
		}
		d.Offset, d.Size = start, size
	case http.StatusOK:
		d.Offset, d.Size = 0, resp.ContentLength
	default:
		resp.Body.Close()
		cancel(nil)
		return nil, fmt.Errorf("%w: %s: status %d", ErrBadResponse, file, resp.StatusCode)
	}
	if s := first.Get("X-Linked-Size"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			d.Size = n
		}
	}
	stall := c.StallTimeout
	if stall <= 0 {
		stall = time.Minute
	}
	d.Body = newStallReader(resp.Body, stall, cancel, c.Endpoint)
	return d, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// normalizeETag strips the weak marker and quotes from an ETag.
func normalizeETag(s string) string {
	return strings.Trim(strings.TrimPrefix(s, "W/"), `"`)
}

// parseContentRange parses "bytes start-end/size" (size may be "*").
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, total, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, 0, false
	}
	size = -1
	if total != "*" {
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil || n <= end {
			return 0, 0, false
		}
		size = n
	}
	return start, size, true
}

// errStalled cancels a download that has stopped receiving data.
var errStalled = errors.New("no data received")

// A stallReader cancels its request when no read has returned data for a
// while: a connection that stays open but sends nothing would otherwise
// block forever.
type stallReader struct {
	body     io.ReadCloser
	timeout  time.Duration
	cancel   context.CancelCauseFunc
	endpoint string
	mu       sync.Mutex
	timer    *time.Timer
	stalled  bool
}

func newStallReader(body io.ReadCloser, timeout time.Duration, cancel context.CancelCauseFunc, endpoint string) *stallReader {
	r := &stallReader{body: body, timeout: timeout, cancel: cancel, endpoint: endpoint}
	r.timer = time.AfterFunc(timeout, func() {
		r.mu.Lock()
		r.stalled = true
		r.mu.Unlock()
		cancel(errStalled)
	})
	return r
}

func (r *stallReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if n > 0 {
		r.timer.Reset(r.timeout)
	}
	if err != nil && err != io.EOF {
		r.mu.Lock()
		stalled := r.stalled
		r.mu.Unlock()
		if stalled {
			err = fmt.Errorf("%v for %v", errStalled, r.timeout)
		}
		err = &NetworkError{Endpoint: r.endpoint, Err: err}
	}
	return n, err
}

func (r *stallReader) Close() error {
	r.timer.Stop()
	err := r.body.Close()
	r.cancel(nil)
	return err
}
