// Package store keeps models pulled from the Hugging Face Hub in a
// directory ($TRIT_MODELS, by default under the user cache directory) and
// finds them by name ("owner/repo:QUANT").
//
// Layout, under the store directory:
//
//	files/OWNER/REPO/PATH          complete, verified files only
//	partial/OWNER/REPO/PATH.HASH   downloads in progress, resumable; HASH
//	                               (16 hex digits of the expected checksum)
//	                               keeps an old version's bytes from being
//	                               resumed into a new one
//	locks/OWNER/REPO/...           lock files: one pull per file at a time
//	manifests/OWNER/REPO.json      the models pulled from REPO
//
// A file reaches files/ only by a rename after its size and checksum were
// verified, so a partial download is never taken for a complete one.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"trit/hub"
)

// Sentinel errors.
var (
	ErrNotFound  = errors.New("store: no such model")
	ErrAmbiguous = errors.New("store: several models match")
	ErrNoSpace   = errors.New("store: not enough disk space")
	ErrChecksum  = errors.New("store: checksum mismatch")
	ErrManifest  = errors.New("store: bad manifest")
)

// A Store is a model directory.
type Store struct {
	Dir string
	// freeSpace reports the bytes available under a directory; ok is
	// false where the platform cannot tell. Tests replace it.
	freeSpace func(dir string) (free int64, ok bool, err error)
}

// DefaultDir returns $TRIT_MODELS, or trit/models under the user cache
// directory (~/.cache on Linux, ~/Library/Caches on macOS).
func DefaultDir() (string, error) {
	if d := os.Getenv("TRIT_MODELS"); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("store: no model directory: set TRIT_MODELS (%v)", err)
	}
	return filepath.Join(cache, "trit", "models"), nil
}

// Open returns the store in dir, creating the directory.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &Store{Dir: dir, freeSpace: diskFree}, nil
}

// A Model is one pulled model: a GGUF file (with its vision projector, if
// pulled) or a whole pack.
type Model struct {
	Repo string `json:"-"`
	// Tag is the quant the model is known by within Repo ("PQ2_0"); empty
	// for a pack.
	Tag      string `json:"tag"`
	Revision string `json:"revision"` // the commit pulled
	Pack     bool   `json:"pack,omitempty"`
	// File is the GGUF model file's path in the repository; empty for a
	// pack.
	File     string     `json:"file,omitempty"`
	MMProj   string     `json:"mmproj,omitempty"`
	Files    []hub.File `json:"files"`
	Pulled   time.Time  `json:"pulled"`
	LastUsed time.Time  `json:"last_used"`

	dir string // the store's files/OWNER/REPO
}

// Name is how the model is named on the command line: "owner/repo:TAG",
// or "owner/repo" for a pack.
func (m *Model) Name() string {
	if m.Tag == "" {
		return m.Repo
	}
	return m.Repo + ":" + m.Tag
}

// Path is the model's local path: the GGUF file, or a pack's directory.
func (m *Model) Path() string {
	if m.Pack {
		return m.dir
	}
	return filepath.Join(m.dir, filepath.FromSlash(m.File))
}

// MMProjPath is the local path of the vision projector, or "".
func (m *Model) MMProjPath() string {
	if m.MMProj == "" {
		return ""
	}
	return filepath.Join(m.dir, filepath.FromSlash(m.MMProj))
}

// Size is the bytes of all the model's files.
func (m *Model) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// manifest is the JSON file of one repository's models.
type manifest struct {
	Repo   string   `json:"repo"`
	Models []*Model `json:"models"`
}

func (s *Store) repoPath(kind, repo string) string {
	return filepath.Join(s.Dir, kind, filepath.FromSlash(repo))
}

func (s *Store) manifestPath(repo string) string {
	return s.repoPath("manifests", repo) + ".json"
}

func (s *Store) readManifest(repo string) (*manifest, error) {
	data, err := os.ReadFile(s.manifestPath(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{Repo: repo}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Repo != repo {
		return nil, fmt.Errorf("%w %s: %v (remove it and pull again)", ErrManifest, s.manifestPath(repo), err)
	}
	for _, mod := range m.Models {
		if mod == nil {
			return nil, fmt.Errorf("%w %s: null model", ErrManifest, s.manifestPath(repo))
		}
		mod.Repo, mod.dir = repo, s.repoPath("files", repo)
		for _, f := range append(mod.Files, hub.File{Path: mod.File}, hub.File{Path: mod.MMProj}) {
			if f.Path != "" && !hub.ValidPath(f.Path) {
				return nil, fmt.Errorf("%w %s: unsafe path %q", ErrManifest, s.manifestPath(repo), f.Path)
			}
		}
	}
	return &m, nil
}

// writeManifest replaces the manifest by a temporary file and a rename;
// an empty one is removed. The caller holds the manifest lock.
func (s *Store) writeManifest(m *manifest) error {
	p := s.manifestPath(m.Repo)
	if len(m.Models) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(p, append(data, '\n'))
}

func writeFileAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// updateManifest runs fn on repo's manifest under its lock and writes the
// result.
func (s *Store) updateManifest(repo string, fn func(*manifest) error) error {
	unlock, err := s.lockWait(context.Background(), s.repoPath("locks", repo)+".manifest.lock", nil)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.readManifest(repo)
	if err != nil {
		return err
	}
	if err := fn(m); err != nil {
		return err
	}
	return s.writeManifest(m)
}

// List returns every pulled model, sorted by name.
func (s *Store) List() ([]*Model, error) {
	root := filepath.Join(s.Dir, "manifests")
	var out []*Model
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		rel, err := filepath.Rel(root, strings.TrimSuffix(p, ".json"))
		if err != nil {
			return err
		}
		repo := filepath.ToSlash(rel)
		if hub.ValidRepoID(repo) != nil {
			return nil // not a manifest of ours
		}
		m, err := s.readManifest(repo)
		if err != nil {
			return err
		}
		out = append(out, m.Models...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *Model) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Find returns the model called name: "owner/repo:TAG" (the tag matched
// case-insensitively, as is the model's file name), or "owner/repo" when
// only one model of the repository was pulled.
func (s *Store) Find(name string) (*Model, error) {
	repo, sel, err := hub.ParseRef(name)
	if err != nil {
		return nil, err
	}
	m, err := s.readManifest(repo)
	if err != nil {
		return nil, err
	}
	return find(m, name, sel)
}

func find(m *manifest, name, sel string) (*Model, error) {
	var names []string
	for _, mod := range m.Models {
		names = append(names, mod.Name())
		if sel != "" && (strings.EqualFold(mod.Tag, sel) || strings.EqualFold(mod.File, sel) || strings.EqualFold(path.Base(mod.File), sel)) {
			return mod, nil
		}
	}
	switch {
	case sel == "" && len(m.Models) == 1:
		return m.Models[0], nil
	case sel == "" && len(m.Models) > 1:
		return nil, fmt.Errorf("%w %q: pulled are %s: name one", ErrAmbiguous, name, strings.Join(names, ", "))
	case len(m.Models) > 0:
		return nil, fmt.Errorf("%w %q: of %s, pulled are only %s", ErrNotFound, name, m.Repo, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%w %q", ErrNotFound, name)
}

// Touch records that m is being used now.
func (s *Store) Touch(m *Model) error {
	now := time.Now().UTC()
	err := s.updateManifest(m.Repo, func(man *manifest) error {
		for _, mod := range man.Models {
			if mod.Tag == m.Tag {
				mod.LastUsed = now
			}
		}
		return nil
	})
	if err == nil {
		m.LastUsed = now
	}
	return err
}

// Remove deletes the model called name and those of its files that no
// other pulled model of the repository uses, and returns it.
func (s *Store) Remove(name string) (*Model, error) {
	repo, sel, err := hub.ParseRef(name)
	if err != nil {
		return nil, err
	}
	var gone *Model
	err = s.updateManifest(repo, func(m *manifest) error {
		mod, err := find(m, name, sel)
		if err != nil {
			return err
		}
		gone = mod
		m.Models = slices.DeleteFunc(m.Models, func(x *Model) bool { return x == mod })
		used := map[string]bool{}
		for _, other := range m.Models {
			for _, f := range other.Files {
				used[f.Path] = true
			}
		}
		dir := s.repoPath("files", repo)
		for _, f := range mod.Files {
			if used[f.Path] {
				continue
			}
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("store: %w", err)
			}
		}
		removeEmptyDirs(dir, filepath.Join(s.Dir, "files"))
		return nil
	})
	return gone, err
}

// removeEmptyDirs removes the empty directories under dir and then dir and
// its parents up to (not including) stop.
func removeEmptyDirs(dir, stop string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range slices.Backward(dirs) {
		os.Remove(d) // fails, harmlessly, when not empty
	}
	for d := filepath.Dir(dir); d != stop && strings.HasPrefix(d, stop); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
}
