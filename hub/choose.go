package hub

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

var (
	ErrNoMatch   = errors.New("hub: no file matches")
	ErrAmbiguous = errors.New("hub: several files match")
)

// DefaultQuants is the order in which Choose picks a GGUF file when no
// quant is named: the smallest lossless ternary packs first (PTQ1_0 and
// PQ2_0 hold the same ternary weights, PTQ1_0 in fewer bytes), then the
// group-64 ternary files, the deprecated group-128 Q2_0, 1-bit Q1_0, and
// the common llama.cpp quants.
var DefaultQuants = []string{"PTQ1_0", "PQ2_0", "Q2_0_g64", "Q2_g64", "Q2_0", "Q1_0", "TQ1_0", "TQ2_0",
	"Q4_K_M", "Q4_0", "Q8_0", "F16", "BF16", "F32"}

// defaultMMProj is the order for vision projectors.
var defaultMMProj = []string{"Q8_0", "F16", "BF16", "F32"}

// A Pick is the files of a repository that make one model.
type Pick struct {
	// Tag names the model within the repository: the quant of a GGUF file
	// ("PQ2_0"), empty for a pack.
	Tag string
	// Files are the files to download: the GGUF file, or every file of a
	// pack.
	Files []File
	// Pack is set for repositories without GGUF files (MLX packs): the
	// model is the whole repository.
	Pack bool
	// Default is set when no selector was given and Tag was chosen by
	// DefaultQuants.
	Default bool
	// Quants lists the quants of the repository's GGUF model files.
	Quants []string
}

// A MatchError says that a selector matched no file or several.
type MatchError struct {
	Repo, Want string
	What       string   // "model file" or "vision projector (mmproj)"
	Matches    []string // the files that matched, when several did
	Have       []string // the files there are to choose from
}

func (e *MatchError) Error() string {
	if len(e.Matches) > 1 {
		want := fmt.Sprintf("%q", e.Want)
		if e.Want == "" {
			want = "the default quant"
		}
		return fmt.Sprintf("hub: %s: %s matches several %ss: %s; name one of them (a quant or the file name)",
			e.Repo, want, e.What, strings.Join(e.Matches, ", "))
	}
	if len(e.Have) == 0 {
		return fmt.Sprintf("hub: %s has no %s", e.Repo, e.What)
	}
	if e.Want == "" {
		return fmt.Sprintf("hub: %s has several %ss and none is a default: name one of %s", e.Repo, e.What, strings.Join(e.Have, ", "))
	}
	return fmt.Sprintf("hub: %s has no %s matching %q; it has: %s", e.Repo, e.What, e.Want, strings.Join(e.Have, ", "))
}

func (e *MatchError) Is(target error) bool {
	return (target == ErrAmbiguous && len(e.Matches) > 1) || (target == ErrNoMatch && len(e.Matches) <= 1)
}

var shardRE = regexp.MustCompile(`(?i)-\d{5}-of-\d{5}$`)

// Quant returns the quant a GGUF file name states: what follows the last
// '-' or '.' of the base name ("Ternary-Bonsai-8B-Q2_0_g64.gguf" →
// "Q2_0_g64"), ignoring a split file's "-00001-of-00003".
func Quant(file string) string {
	base := path.Base(file)
	base = base[:len(base)-len(path.Ext(base))]
	base = shardRE.ReplaceAllString(base, "")
	if i := strings.LastIndexAny(base, "-."); i >= 0 {
		return base[i+1:]
	}
	return base
}

func isGGUF(p string) bool { return strings.EqualFold(path.Ext(p), ".gguf") }

func isMMProj(p string) bool { return strings.Contains(strings.ToLower(path.Base(p)), "mmproj") }

// Choose picks the model file of a repository's listing that sel names: a
// file name or path, or a quant, matched case-insensitively (exactly, then
// as a substring of the quant, then of the file name). An empty sel picks
// by DefaultQuants. A repository without GGUF files is a pack: every file
// is picked, and sel must be empty.
func Choose(repo string, files []File, sel string) (Pick, error) {
	var models []File
	for _, f := range files {
		if isGGUF(f.Path) && !isMMProj(f.Path) {
			models = append(models, f)
		}
	}
	if len(models) == 0 {
		if sel != "" {
			return Pick{}, fmt.Errorf("%w: %s has no GGUF files: it is a pack of %d files, pulled whole (drop %q)", ErrNoMatch, repo, len(files), ":"+sel)
		}
		if len(files) == 0 {
			return Pick{}, fmt.Errorf("%w: %s has no files", ErrNoMatch, repo)
		}
		return Pick{Files: files, Pack: true}, nil
	}
	p := Pick{Quants: quants(models)}
	f, err := choose(repo, models, sel, DefaultQuants, "model file")
	if err != nil {
		return Pick{}, err
	}
	p.Files = []File{f}
	p.Tag = Quant(f.Path)
	p.Default = sel == ""
	return p, nil
}

// ChooseMMProj picks the vision projector that sel names (a quant or a
// file name; empty: the default, Q8_0 first).
func ChooseMMProj(repo string, files []File, sel string) (File, error) {
	var proj []File
	for _, f := range files {
		if isGGUF(f.Path) && isMMProj(f.Path) {
			proj = append(proj, f)
		}
	}
	return choose(repo, proj, sel, defaultMMProj, "vision projector (mmproj)")
}

func choose(repo string, files []File, sel string, defaults []string, what string) (File, error) {
	merr := &MatchError{Repo: repo, Want: sel, What: what}
	for _, f := range files {
		merr.Have = append(merr.Have, path.Base(f.Path))
	}
	if len(files) == 0 {
		return File{}, merr
	}
	if sel == "" {
		if len(files) == 1 {
			return files[0], nil
		}
		for _, q := range defaults {
			if m := matching(files, func(f File) bool { return strings.EqualFold(Quant(f.Path), q) }); len(m) > 0 {
				return one(m, merr)
			}
		}
		return File{}, merr
	}
	low := strings.ToLower(sel)
	tests := []func(File) bool{
		func(f File) bool { return strings.EqualFold(f.Path, sel) || strings.EqualFold(path.Base(f.Path), sel) },
		func(f File) bool { return strings.EqualFold(Quant(f.Path), sel) },
		func(f File) bool { return strings.Contains(strings.ToLower(Quant(f.Path)), low) },
		func(f File) bool { return strings.Contains(strings.ToLower(path.Base(f.Path)), low) },
	}
	for _, t := range tests {
		if m := matching(files, t); len(m) > 0 {
			return one(m, merr)
		}
	}
	return File{}, merr
}

func matching(files []File, ok func(File) bool) []File {
	var m []File
	for _, f := range files {
		if ok(f) {
			m = append(m, f)
		}
	}
	return m
}

func one(m []File, merr *MatchError) (File, error) {
	if len(m) == 1 {
		return m[0], nil
	}
	for _, f := range m {
		merr.Matches = append(merr.Matches, f.Path)
	}
	return File{}, merr
}

func quants(files []File) []string {
	var q []string
	for _, f := range files {
		if s := Quant(f.Path); !slices.Contains(q, s) {
			q = append(q, s)
		}
	}
	return q
}
