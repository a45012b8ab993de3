package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// A File is one file of a repository, as the tree listing reports it.
type File struct {
	Path string `json:"path"` // slash-separated, relative to the repository root
	Size int64  `json:"size"`
	// OID is the git blob id: the SHA-1 of "blob <size>\x00" and the
	// content, for files stored in git itself.
	OID string `json:"oid"`
	// SHA256 is the content's SHA-256 for LFS files; empty otherwise.
	SHA256 string `json:"sha256,omitempty"`
}

// LFS reports whether the file is stored in LFS (large files: weights).
func (f File) LFS() bool { return f.SHA256 != "" }

// Limits on what a listing may hold; far above any model repository, they
// keep a broken or hostile server from making the client allocate without
// bound.
const (
	maxJSONBytes = 32 << 20
	maxPages     = 1000
	maxFiles     = 100_000
)

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// Commit returns the commit id that revision (a branch, tag or commit)
// names. Pulls list and download at that commit, so that a push in
// between cannot mix two versions.
func (c *Client) Commit(ctx context.Context, repo, revision string) (string, error) {
	if err := ValidRepoID(repo); err != nil {
		return "", err
	}
	u := c.Endpoint + "/api/models/" + repo + "/revision/" + url.PathEscape(revision)
	var info struct {
		SHA string `json:"sha"`
	}
	if _, err := c.getJSON(ctx, u, repo, &info); err != nil {
		return "", err
	}
	if len(info.SHA) != 40 || !hexRE.MatchString(info.SHA) {
		return "", fmt.Errorf("%w: %s: the revision has no commit id (sha %q)", ErrBadResponse, repo, info.SHA)
	}
	return info.SHA, nil
}

// List returns every file of the repository at revision, following the
// listing's pages, in the Hub's order.
func (c *Client) List(ctx context.Context, repo, revision string) ([]File, error) {
	if err := ValidRepoID(repo); err != nil {
		return nil, err
	}
	u := c.Endpoint + "/api/models/" + repo + "/tree/" + url.PathEscape(revision) + "?recursive=true"
	var files []File
	for page := 0; u != ""; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("%w: %s: the listing has more than %d pages", ErrBadResponse, repo, maxPages)
		}
		var entries []struct {
			Type string `json:"type"`
			OID  string `json:"oid"`
			Size int64  `json:"size"`
			Path string `json:"path"`
			LFS  *struct {
				OID  string `json:"oid"`
				Size int64  `json:"size"`
			} `json:"lfs"`
		}
		next, err := c.getJSON(ctx, u, repo, &entries)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type != "file" {
				continue // directories: their files are listed too
			}
			f := File{Path: e.Path, Size: e.Size, OID: e.OID}
			if e.LFS != nil {
				f.SHA256, f.Size = e.LFS.OID, e.LFS.Size
			}
			if err := checkFile(f); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrBadResponse, repo, err)
			}
			if len(files) == maxFiles {
				return nil, fmt.Errorf("%w: %s: more than %d files", ErrBadResponse, repo, maxFiles)
			}
			files = append(files, f)
		}
		u = next
	}
	return files, nil
}

// checkFile rejects listing entries that could not be stored safely or
// verified: paths that leave the repository directory, negative sizes,
// malformed hashes.
func checkFile(f File) error {
	if !ValidPath(f.Path) {
		return fmt.Errorf("unsafe file path %q", f.Path)
	}
	if f.Size < 0 {
		return fmt.Errorf("%s: negative size %d", f.Path, f.Size)
	}
	if f.SHA256 != "" && (len(f.SHA256) != 64 || !hexRE.MatchString(f.SHA256)) {
		return fmt.Errorf("%s: malformed SHA-256 %q", f.Path, f.SHA256)
	}
	if f.SHA256 == "" && (len(f.OID) != 40 || !hexRE.MatchString(f.OID)) {
		return fmt.Errorf("%s: malformed git blob id %q", f.Path, f.OID)
	}
	return nil
}

// ValidPath reports whether p is a clean relative slash-separated path
// that stays inside its directory on every operating system.
func ValidPath(p string) bool {
	if p == "" || len(p) > 1024 || p != path.Clean(p) || path.IsAbs(p) || p == "." ||
		strings.HasPrefix(p, "../") || p == ".." || strings.ContainsAny(p, "\\:\x00") {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." || el == "." {
			return false
		}
	}
	return true
}

// getJSON decodes the JSON body of a GET into v and returns the URL of the
// next page from the Link header, if any.
func (c *Client) getJSON(ctx context.Context, u, repo string, v any) (next string, err error) {
	resp, err := c.get(ctx, u, repo, "", nil, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &NetworkError{Endpoint: c.Endpoint, Err: err}
	}
	if len(body) > maxJSONBytes {
		return "", fmt.Errorf("%w: %s: answer over %d bytes", ErrBadResponse, u, maxJSONBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrBadResponse, u, err)
	}
	next = nextLink(resp.Header.Values("Link"))
	if next != "" {
		// Relative links are resolved against the page's URL.
		base, err1 := url.Parse(u)
		ref, err2 := url.Parse(next)
		if err1 != nil || err2 != nil {
			return "", fmt.Errorf("%w: %s: bad Link %q", ErrBadResponse, u, next)
		}
		next = base.ResolveReference(ref).String()
	}
	return next, nil
}

// nextLink returns the target of rel="next" in Link headers (RFC 8288),
// the Hub's pagination, as on GitHub.
func nextLink(values []string) string {
	for _, v := range values {
		for _, link := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && strings.Trim(val, `"`) == "next" {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}
