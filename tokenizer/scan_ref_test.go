package tokenizer

import (
	"regexp"
	"testing"
)

// The scanners are checked against Go's regexp, which picks the same
// match as a backtracking engine for expressions without lookaround. The
// two whitespace alternatives that need lookahead are done by hand here;
// \s is spelled out as Unicode White_Space (Go's \s is ASCII only) and the
// contractions as llama.cpp spells them (Go's (?i) would also fold 'ſ').
const (
	refSpace     = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
	refContract  = `'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]`
	refQwen2Head = `^(?:` + refContract + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^` + refSpace + `\p{L}\p{N}]+[\r\n]*|[` + refSpace + `]*[\r\n]+)`
	refQwen35Hd  = `^(?:` + refContract + `|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^` + refSpace + `\p{L}\p{M}\p{N}]+[\r\n]*|[` + refSpace + `]*[\r\n]+)`
)

var (
	reQwen2  = regexp.MustCompile(refQwen2Head)
	reQwen35 = regexp.MustCompile(refQwen35Hd)
	reSpaces = regexp.MustCompile(`^[` + refSpace + `]+`)
)

// refScan returns the end of the piece at s[i:] by the reference.
func refScan(re *regexp.Regexp, s string, i int) int {
	if m := re.FindStringIndex(s[i:]); m != nil {
		return i + m[1]
	}
	m := reSpaces.FindStringIndex(s[i:])
	if m == nil {
		return -1 // the regex matches nowhere: a scanner bug if reached
	}
	j := i + m[1]
	if j == len(s) {
		return j // \s+(?!\S) at the end of the text
	}
	// \s+(?!\S) gives back the last whitespace rune when that leaves one;
	// otherwise \s+ takes the single rune.
	k := j - 1
	for k > i && !isRuneStart(s[k]) {
		k--
	}
	if k > i {
		return k
	}
	return j
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func checkScanners(t *testing.T, s string) {
	for _, sc := range []struct {
		name string
		scan func(string, int) int
		re   *regexp.Regexp
	}{{"qwen2", scanQwen2, reQwen2}, {"qwen35", scanQwen35, reQwen35}} {
		for i := 0; i < len(s); {
			got, want := sc.scan(s, i), refScan(sc.re, s, i)
			if got != want {
				t.Fatalf("%s %q at %d: scanner ends at %d, reference at %d", sc.name, s, i, got, want)
			}
			i = got
		}
	}
}

func FuzzScanners(f *testing.F) {
	for _, s := range []string{
		"Hello world", "  Hello", "\t\tx", "end  ", "a\n\n b", "x  \n\t", "I've 'RE we'LL 'd 'sa",
		"3.3 (x) 12345", "hi!!!\n\nyo", " !\r\n", "ab\u00a0c", "Привет мир", "ab\u0301! \u0301\u0301 1\u0301a",
		"\u3000\u3000x", " \n \n  x", "🦙 ፀ ℬ 𝔘 — naïve", "'\n'x", "\r\n\r\n", " \u2028x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScanners(t, s)
	})
}
