package store

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"trit/hub"
)

// A Meter shows the progress of one file's download.
type Meter interface {
	// Start begins a file of size bytes, of which have are already here.
	Start(file string, have, size int64)
	// Update reports the bytes of the file now here.
	Update(have int64)
	// Finish ends the file; err is nil when it is complete and verified.
	Finish(err error)
}

// PullOptions are the settings of Pull; the zero value is usable.
type PullOptions struct {
	Revision string // branch, tag or commit; empty: main
	// MMProj pulls the vision projector too: MMProjSel names its quant
	// (empty: the default).
	MMProj    bool
	MMProjSel string
	// Log receives one line per step (without trailing newline); nil
	// discards them.
	Log func(format string, args ...any)
	// Meter shows download progress; nil shows none.
	Meter Meter
	// Attempts is the number of tries per file when the connection fails
	// mid-file, each resuming where the last stopped (0: 4).
	Attempts int
	// RetryWait is the first wait between tries, doubled after each
	// (0: one second).
	RetryWait time.Duration
}

// A ChecksumError is a downloaded file whose content does not match the
// checksum the Hub lists; the download has been deleted.
type ChecksumError struct {
	File      string
	Want, Got string
	Kind      string // "SHA-256" or "git blob id"
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("store: %s: %s mismatch: the Hub lists %s, the download has %s; the download was deleted, run the pull again",
		e.File, e.Kind, e.Want, e.Got)
}

func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// A SpaceError is a pull that would not fit on the disk.
type SpaceError struct {
	Dir        string
	Need, Free int64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("store: the pull needs %s more and %s has %s free: free some space (trit rm) or set TRIT_MODELS to another disk",
		gb(e.Need), e.Dir, gb(e.Free))
}

func (e *SpaceError) Unwrap() error { return ErrNoSpace }

// gb formats a byte count in decimal units, as the Hub shows file sizes.
func gb(n int64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + " GB"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	case n >= 1e4:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " kB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// Pull downloads the model ref names ("owner/repo[:QUANT-or-FILE]", see
// hub.Choose) into the store, resuming partial downloads, and records it.
// Files already in the store are not downloaded again.
func (s *Store) Pull(ctx context.Context, c *hub.Client, ref string, opt PullOptions) (*Model, error) {
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	repo, sel, err := hub.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	rev := opt.Revision
	if rev == "" {
		rev = "main"
	}
	commit, err := c.Commit(ctx, repo, rev)
	if err != nil {
		return nil, err
	}
	files, err := c.List(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	pick, err := hub.Choose(repo, files, sel)
	if err != nil {
		return nil, err
	}
	mod := &Model{Repo: repo, Tag: pick.Tag, Revision: commit, Pack: pick.Pack, Files: pick.Files, dir: s.repoPath("files", repo)}
	switch {
	case pick.Pack:
		logf("%s has no GGUF files: pulling the whole pack (%d files)", repo, len(pick.Files))
	case pick.Default && len(pick.Quants) > 1:
		logf("no quant named: taking %s, the default (%s also has %s; pull %s:QUANT for another)",
			pick.Tag, repo, strings.Join(slices.DeleteFunc(slices.Clone(pick.Quants), func(q string) bool { return q == pick.Tag }), ", "), repo)
	}
	if !pick.Pack {
		mod.File = pick.Files[0].Path
		proj, perr := hub.ChooseMMProj(repo, files, opt.MMProjSel)
		switch {
		case opt.MMProj && perr != nil:
			return nil, perr
		case opt.MMProj:
			mod.MMProj = proj.Path
			mod.Files = append(mod.Files, proj)
		case perr == nil || errors.Is(perr, hub.ErrAmbiguous):
			logf("%s also has a vision projector: add --mmproj to pull it", repo)
		}
	}
	logf("pulling %s at commit %.12s", mod.Name(), commit)
	if err := s.checkSpace(repo, mod.Files); err != nil {
		return nil, err
	}
	for _, f := range mod.Files {
		if err := s.fetch(ctx, c, repo, commit, f, opt, logf); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	mod.Pulled, mod.LastUsed = now, now
	err = s.updateManifest(repo, func(m *manifest) error {
		m.Models = slices.DeleteFunc(m.Models, func(x *Model) bool { return strings.EqualFold(x.Tag, mod.Tag) })
		m.Models = append(m.Models, mod)
		slices.SortFunc(m.Models, func(a, b *Model) int { return strings.Compare(a.Tag, b.Tag) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mod, nil
}

// checkSpace fails before any download when the files still to fetch do
// not fit in the free space of the store's disk.
func (s *Store) checkSpace(repo string, files []hub.File) error {
	var need int64
	for _, f := range files {
		if st, err := os.Stat(s.finalPath(repo, f)); err == nil && st.Size() == f.Size {
			continue
		}
		need += f.Size
		if st, err := os.Stat(s.partialPath(repo, f)); err == nil && st.Size() <= f.Size {
			need -= st.Size()
		}
	}
	if need == 0 {
		return nil
	}
	freeSpace := s.freeSpace
	if freeSpace == nil {
		freeSpace = diskFree
	}
	free, ok, err := freeSpace(s.Dir)
	if err != nil || !ok {
		return err
	}
	if free < need {
		return &SpaceError{Dir: s.Dir, Need: need, Free: free}
	}
	return nil
}

func (s *Store) finalPath(repo string, f hub.File) string {
	return filepath.Join(s.repoPath("files", repo), filepath.FromSlash(f.Path))
}

// expected returns the checksum a file must have and its kind.
func expected(f hub.File) (sum, kind string) {
	if f.LFS() {
		return f.SHA256, "SHA-256"
	}
	return f.OID, "git blob id"
}

func (s *Store) partialPath(repo string, f hub.File) string {
	sum, _ := expected(f)
	return filepath.Join(s.repoPath("partial", repo), filepath.FromSlash(f.Path)) + "." + sum[:16]
}

// newHash returns the hash that checks f: SHA-256 of the content for LFS
// files, git's blob SHA-1 ("blob <size>\x00" then the content) otherwise.
func newHash(f hub.File) hash.Hash {
	if f.LFS() {
		return sha256.New()
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", f.Size)
	return h
}

// lockWait takes the lock file p, waiting (calling waiting once) while
// another pull holds it.
func (s *Store) lockWait(ctx context.Context, p string, waiting func()) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	for first := true; ; first = false {
		unlock, ok, err := tryLock(p)
		if err != nil || ok {
			return unlock, err
		}
		if first && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fetch brings f into files/ under its lock: nothing to do when it is
// there already, else it resumes or starts the download into partial/,
// verifies it and renames it into place.
func (s *Store) fetch(ctx context.Context, c *hub.Client, repo, commit string, f hub.File, opt PullOptions, logf func(string, ...any)) error {
	lock := filepath.Join(s.repoPath("locks", repo), "files", filepath.FromSlash(f.Path)) + ".lock"
	unlock, err := s.lockWait(ctx, lock, func() { logf("%s: waiting for another pull of it to finish (lock %s)", f.Path, lock) })
	if err != nil {
		return err
	}
	defer unlock()
	final := s.finalPath(repo, f)
	if ok, err := s.complete(repo, f, final); ok || err != nil {
		return err
	}
	part := s.partialPath(repo, f)
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	w, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer w.Close()
	st, err := w.Stat()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	have := st.Size()
	h := newHash(f)
	if have > f.Size {
		have = 0
	}
	// The bytes already here go into the hash first; then the download
	// appends to the file and the hash together.
	if _, err := io.CopyN(h, w, have); err != nil {
		logf("%s: the partial download is unreadable (%v): starting over", f.Path, err)
		have, h = 0, newHash(f)
	}
	if err := w.Truncate(have); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if _, err := w.Seek(have, io.SeekStart); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	meter := opt.Meter
	if meter == nil {
		meter = nopMeter{}
	}
	meter.Start(f.Path, have, f.Size)
	attempts := opt.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	wait := opt.RetryWait
	if wait <= 0 {
		wait = time.Second
	}
	for try := 1; have < f.Size; try++ {
		err = s.download(ctx, c, repo, commit, f, w, &h, &have, meter)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			w.Sync()
			err = fmt.Errorf("store: %s: stopped at %s of %s; the same pull resumes it: %w", f.Path, gb(have), gb(f.Size), ctx.Err())
			meter.Finish(err)
			return err
		}
		if try >= attempts || !retryable(err) {
			w.Sync()
			if have > 0 && retryable(err) {
				err = fmt.Errorf("%w (%s of %s kept: the same pull resumes it)", err, gb(have), gb(f.Size))
			}
			meter.Finish(err)
			return err
		}
		logf("%s: %v; trying again from %s", f.Path, err, gb(have))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
	want, kind := expected(f)
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		w.Close()
		os.Remove(part)
		err := &ChecksumError{File: f.Path, Want: want, Got: got, Kind: kind}
		meter.Finish(err)
		return err
	}
	if err := w.Sync(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.Rename(part, final); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	removeEmptyDirs(filepath.Dir(part), filepath.Join(s.Dir, "partial"))
	meter.Finish(nil)
	return nil
}

// complete reports whether final holds f already: a file of the right
// size that a manifest of the repository records with f's checksum, or
// (a pack interrupted before its manifest was written) whose content has
// that checksum.
func (s *Store) complete(repo string, f hub.File, final string) (bool, error) {
	st, err := os.Stat(final)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	if st.Size() != f.Size {
		return false, nil
	}
	if m, err := s.readManifest(repo); err == nil {
		for _, mod := range m.Models {
			for _, g := range mod.Files {
				if g.Path == f.Path && g.SHA256 == f.SHA256 && g.OID == f.OID {
					return true, nil
				}
			}
		}
	}
	r, err := os.Open(final)
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	defer r.Close()
	h := newHash(f)
	if _, err := io.Copy(h, r); err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	want, _ := expected(f)
	return hex.EncodeToString(h.Sum(nil)) == want, nil
}

type nopMeter struct{}

func (nopMeter) Start(string, int64, int64) {}
func (nopMeter) Update(int64)               {}
func (nopMeter) Finish(error)               {}

// errChanged reports a file that is not the version the listing named.
var errChanged = errors.New("the Hub serves a different version of the file than it lists")

// download makes one attempt at the rest of f, appending to w and *h.
func (s *Store) download(ctx context.Context, c *hub.Client, repo, commit string, f hub.File, w *os.File, h *hash.Hash, have *int64, meter Meter) error {
	d, err := c.Open(ctx, repo, commit, f.Path, *have)
	if err != nil {
		return err
	}
	defer d.Body.Close()
	want, _ := expected(f)
	if d.ETag != "" && len(d.ETag) == len(want) && isHex(d.ETag) && d.ETag != want {
		return fmt.Errorf("store: %s: %w (ETag %s, listed %s)", f.Path, errChanged, d.ETag, want)
	}
	if d.Size >= 0 && d.Size != f.Size {
		return fmt.Errorf("store: %s: %w (%d bytes, listed %d)", f.Path, errChanged, d.Size, f.Size)
	}
	if d.Offset != *have {
		// The server ignored the Range request: start over.
		if err := w.Truncate(0); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if _, err := w.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		*have, *h = 0, newHash(f)
		meter.Start(f.Path, 0, f.Size)
	}
	buf := make([]byte, 1<<20)
	for {
		n, rerr := d.Body.Read(buf)
		if int64(n) > f.Size-*have {
			return fmt.Errorf("store: %s: %w (more than %d bytes)", f.Path, errChanged, f.Size)
		}
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return fmt.Errorf("store: writing %s: %w", f.Path, err)
			}
			(*h).Write(buf[:n])
			*have += int64(n)
			meter.Update(*have)
		}
		// Stop at once on Ctrl-C, even while the connection still has
		// buffered data to give.
		if err := ctx.Err(); err != nil {
			return err
		}
		if rerr == io.EOF {
			if *have < f.Size {
				return fmt.Errorf("store: %s: %w", f.Path, io.ErrUnexpectedEOF)
			}
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// retryable reports failures that another try may not meet: the network,
// a truncated body, a Hub overloaded or briefly failing.
func retryable(err error) bool {
	var he *hub.Error
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status >= 500
	}
	return errors.Is(err, hub.ErrNetwork) || errors.Is(err, io.ErrUnexpectedEOF)
}
