// Package hub is a client for the parts of the Hugging Face Hub HTTP API
// that downloading a model needs: a repository's commit and file listing
// (with the sizes and SHA-256 sums of LFS files) and file downloads through
// /resolve/, which redirect to a CDN and honour HTTP Range requests.
//
// The endpoint and the access token come from HF_ENDPOINT and HF_TOKEN, as
// in the Hub's own tools.
package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub used when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Sentinel errors; the errors returned wrap one of them where it applies.
var (
	ErrRepoNotFound     = errors.New("hub: repository not found")
	ErrRevisionNotFound = errors.New("hub: revision not found")
	ErrEntryNotFound    = errors.New("hub: file not found")
	ErrAuth             = errors.New("hub: access denied")
	ErrNetwork          = errors.New("hub: network error")
	ErrBadRepoID        = errors.New("hub: bad repository id")
	ErrBadResponse      = errors.New("hub: bad response")
)

// A Client talks to one Hub endpoint.
type Client struct {
	// Endpoint is the Hub's base URL, without a trailing slash.
	Endpoint string
	// Token, if set, is sent as a bearer token (a Hub access token).
	Token string
	// HTTP is the client used; nil means one with the timeouts of New.
	HTTP *http.Client
	// StallTimeout ends a download that has received no bytes for this
	// long (0: one minute), so a dead connection never hangs a pull.
	StallTimeout time.Duration
}

// New returns a client for $HF_ENDPOINT (default DefaultEndpoint) with the
// token in $HF_TOKEN.
func New() *Client {
	ep := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/")
	if ep == "" {
		ep = DefaultEndpoint
	}
	return &Client{Endpoint: ep, Token: os.Getenv("HF_TOKEN")}
}

// defaultHTTP bounds the connection set-up and the wait for response
// headers, never the transfer (a model file takes minutes); stalled
// transfers are caught by the stall timer instead.
var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   30 * time.Second,
	ResponseHeaderTimeout: 60 * time.Second,
	ForceAttemptHTTP2:     true,
	MaxIdleConnsPerHost:   4,
}}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// ValidRepoID reports whether id has the form owner/name with the
// characters the Hub allows, so that it can name a directory safely.
func ValidRepoID(id string) error {
	owner, name, ok := strings.Cut(id, "/")
	if !ok || !validIDPart(owner) || !validIDPart(name) {
		return fmt.Errorf("%w %q: want owner/name (letters, digits, '-', '_', '.')", ErrBadRepoID, id)
	}
	return nil
}

func validIDPart(s string) bool {
	if s == "" || len(s) > 96 || s[0] == '.' || s[0] == '-' || strings.Contains(s, "..") || strings.HasSuffix(s, ".") {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// ParseRef splits "owner/name[:selector]" into the repository and the
// selector (a quant or a file name). A leading "hf.co/",
// "huggingface.co/" or "https://huggingface.co/" is accepted, as ollama
// and llama.cpp users write them.
func ParseRef(ref string) (repo, sel string, err error) {
	r := ref
	for _, p := range []string{"https://", "http://", "hf.co/", "huggingface.co/"} {
		r = strings.TrimPrefix(r, p)
	}
	repo, sel, _ = strings.Cut(r, ":")
	if err := ValidRepoID(repo); err != nil {
		return "", "", err
	}
	return repo, sel, nil
}

// An Error is a failed Hub request, with the Hub's error code.
type Error struct {
	Repo    string
	File    string // the file requested, if any
	Status  int
	Code    string // X-Error-Code, e.g. "RepoNotFound", "GatedRepo", "EntryNotFound"
	Message string // X-Error-Message
	Token   bool   // whether the request carried a token
}

func (e *Error) Error() string {
	what := e.Repo
	if e.File != "" {
		what += ": " + e.File
	}
	var why string
	switch {
	case e.Code == "GatedRepo" && !e.Token:
		why = "the repository is gated: accept its terms on the Hub, then set HF_TOKEN to an access token of that account"
	case e.Code == "GatedRepo":
		why = "the repository is gated and the account of HF_TOKEN has not been granted access: accept its terms on the Hub"
	case e.Code == "RevisionNotFound":
		why = "no such revision (branch, tag or commit)"
	case e.Code == "EntryNotFound" || (e.Status == http.StatusNotFound && e.File != "" && e.Code != "RepoNotFound"):
		why = "no such file in the repository"
	case e.Status == http.StatusUnauthorized && !e.Token:
		why = "no such repository, or it is private or gated: if you have access, set HF_TOKEN to an access token (https://huggingface.co/settings/tokens)"
	case e.Status == http.StatusUnauthorized:
		why = "the token in HF_TOKEN was refused, or no such repository: check the token and the name"
	case e.Status == http.StatusForbidden:
		why = "access denied: the token in HF_TOKEN lacks permission for this repository"
		if !e.Token {
			why = "access denied: set HF_TOKEN to an access token with access to this repository"
		}
	case e.Status == http.StatusNotFound || e.Code == "RepoNotFound":
		why = "no such repository"
	case e.Status == http.StatusTooManyRequests:
		why = "rate limited by the Hub: try again later"
		if !e.Token {
			why += " (requests with HF_TOKEN set get higher limits)"
		}
	default:
		why = "the Hub answered " + http.StatusText(e.Status)
	}
	msg := fmt.Sprintf("hub: %s: %d: %s", what, e.Status, why)
	if e.Message != "" {
		msg += " (Hub: " + e.Message + ")"
	}
	return msg
}

// Is maps the status and the Hub's error code to the sentinel errors.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.Code == "GatedRepo" || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrRepoNotFound:
		return e.Code == "RepoNotFound" || (e.Status == http.StatusNotFound && e.File == "" && e.Code == "") ||
			(e.Status == http.StatusUnauthorized && e.Code != "GatedRepo")
	case ErrRevisionNotFound:
		return e.Code == "RevisionNotFound"
	case ErrEntryNotFound:
		return e.Code == "EntryNotFound" || (e.Status == http.StatusNotFound && e.File != "" && e.Code != "RepoNotFound" && e.Code != "RevisionNotFound")
	}
	return false
}

// A NetworkError is a request that got no HTTP answer.
type NetworkError struct {
	Endpoint string
	Err      error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("hub: cannot reach %s (is the network up? HF_ENDPOINT selects another Hub): %v", e.Endpoint, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }

func (e *NetworkError) Is(target error) bool { return target == ErrNetwork }

// get sends a GET for u with the token and extra headers, and turns a
// transport failure or an error status into an *Error or *NetworkError.
// The caller closes the body of a successful response.
func (c *Client) get(ctx context.Context, u, repo, file string, hdr http.Header, cr func(*http.Request, []*http.Request) error) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "trit")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.httpClient()
	if cr != nil {
		copied := *hc
		copied.CheckRedirect = cr
		hc = &copied
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, errTooManyRedirects) {
			return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
		}
		return nil, &NetworkError{Endpoint: c.Endpoint, Err: err}
	}
	if resp.StatusCode >= 300 {
		resp.Body.Close()
		return nil, &Error{Repo: repo, File: file, Status: resp.StatusCode,
			Code: resp.Header.Get("X-Error-Code"), Message: resp.Header.Get("X-Error-Message"), Token: c.Token != ""}
	}
	return resp, nil
}

var errTooManyRedirects = errors.New("too many redirects")

// escapePath escapes each element of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
