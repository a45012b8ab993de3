package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The Qwen pre-tokenizers split text with these regular expressions
// (Hugging Face and llama.cpp spell them this way):
//
//	qwen2:  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//	        ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	qwen35: the same with [\p{L}\p{M}]+ for the letter run and \p{M}
//	        added to the excluded set of the punctuation run.
//
// Go's regexp has no lookahead, and the alternatives are tried in order
// with backtracking, so the scanners below reproduce that matching by hand:
// each returns the end of the piece that starts at i.

// Character classes of the regexes.
const (
	cLetter  = 1 << iota // \p{L}
	cNumber              // \p{N}
	cSpace               // \s (Unicode White_Space)
	cMark                // \p{M}
	cNewline             // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOf(r)
	}
	return t
}()

func classOf(r rune) uint8 {
	var c uint8
	switch {
	case unicode.IsLetter(r):
		c = cLetter
	case unicode.IsNumber(r):
		c = cNumber
	case unicode.IsMark(r):
		c = cMark
	case unicode.IsSpace(r):
		c = cSpace
		if r == '\r' || r == '\n' {
			c |= cNewline
		}
	}
	return c
}

// at decodes the rune at s[i:] and returns its class and width. Invalid
// UTF-8 counts as one byte of class 0 (like a symbol), so it stays in the
// piece and byte-level BPE keeps it.
func at(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w == 1 {
		return 0, 1
	}
	return classOf(r), w
}

// run returns the end of the run of runes starting at i whose class
// intersects mask.
func run(s string, i int, mask uint8) int {
	for i < len(s) {
		c, w := at(s, i)
		if c&mask == 0 {
			break
		}
		i += w
	}
	return i
}

func scanQwen2(s string, i int) int  { return scanQwen(s, i, cLetter) }
func scanQwen35(s string, i int) int { return scanQwen(s, i, cLetter|cMark) }

// scanQwen returns the end of the pre-token starting at s[i]; word is the
// class set of letter runs (letters, plus marks for qwen35).
func scanQwen(s string, i int, word uint8) int {
	c, w := at(s, i)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}

	// [^\r\n\p{L}\p{N}]?<word>+ : the optional lead may itself be a mark in
	// qwen35, in which case the run simply starts at i.
	if c&word != 0 {
		return run(s, i, word)
	}
	if c&(cNewline|cLetter|cNumber) == 0 && i+w < len(s) {
		if c2, _ := at(s, i+w); c2&word != 0 {
			return run(s, i+w, word)
		}
	}

	// \p{N}: a single digit.
	if c&cNumber != 0 {
		return i + w
	}

	// ' ?[^\s\p{L}\p{N}]+[\r\n]*' (qwen35 also excludes \p{M}).
	other := uint8(cSpace | cLetter | cNumber | word)
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		j = i + 1
	}
	if c2, _ := at(s, j); c2&other == 0 {
		j = runNot(s, j, other)
		return run(s, j, cNewline)
	}

	// Whitespace: only the alternatives below remain.
	end := run(s, i, cSpace)
	if end == i { // unreachable for well-formed classes; keep progress
		return i + w
	}
	// \s*[\r\n]+ : backtracking gives up the run down to its last newline.
	last := -1
	for k := i; k < end; {
		ck, wk := at(s, k)
		if ck&cNewline != 0 {
			last = k
		}
		k += wk
	}
	if last >= 0 {
		return last + 1
	}
	// \s+(?!\S) : before a non-space, give back the last whitespace rune.
	if end < len(s) {
		_, lw := utf8.DecodeLastRuneInString(s[i:end])
		if end-lw > i {
			return end - lw
		}
	}
	// \s+
	return end
}

// runNot returns the end of the run starting at i of runes whose class
// does not intersect mask.
func runNot(s string, i int, mask uint8) int {
	for i < len(s) {
		c, w := at(s, i)
		if c&mask != 0 {
			break
		}
		i += w
	}
	return i
}

// contraction returns the length of the English contraction suffix that s
// starts with ("s", "t", "re", "ve", "m", "ll", "d", any ASCII case), or 0.
func contraction(s string) int {
	if s == "" {
		return 0
	}
	// OR-ing 0x20 lower-cases ASCII letters and maps no other byte onto one.
	second := byte(0)
	switch s[0] | 0x20 {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		second = 'e'
	case 'l':
		second = 'l'
	default:
		return 0
	}
	if len(s) >= 2 && s[1]|0x20 == second {
		return 2
	}
	return 0
}
