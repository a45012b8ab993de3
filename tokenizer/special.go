package tokenizer

import (
	"slices"
	"strings"
)

// specialSet finds control, unknown and user-defined tokens in raw text, so
// that they become single ids instead of being pre-tokenised.
type specialSet struct {
	tokens []string
	types  []int32
	byHead [256][]int32 // candidate ids by first byte, longest text first
	any    bool
}

func newSpecialSet(tokens []string, types []int32) specialSet {
	s := specialSet{tokens: tokens, types: types}
	for id, tok := range tokens {
		switch types[id] {
		case TypeControl, TypeUnknown, TypeUserDefined:
			if tok != "" {
				s.byHead[tok[0]] = append(s.byHead[tok[0]], int32(id))
				s.any = true
			}
		}
	}
	for i := range s.byHead {
		if len(s.byHead[i]) > 1 {
			s.byHead[i] = sortedBySize(tokens, s.byHead[i])
		}
	}
	return s
}

// split calls f for each piece of text in order: with id -1 for runs of
// ordinary text and with the token id for each special token found. At each
// position the longest matching token wins. Control and unknown tokens are
// matched only when parseSpecial is set; user-defined ones always.
func (s *specialSet) split(text string, parseSpecial bool, f func(frag string, id int32)) {
	if text == "" {
		return
	}
	if !s.any {
		f(text, -1)
		return
	}
	start := 0
	for i := 0; i < len(text); {
		id := s.match(text[i:], parseSpecial)
		if id < 0 {
			i++
			continue
		}
		if start < i {
			f(text[start:i], -1)
		}
		f("", id)
		i += len(s.tokens[id])
		start = i
	}
	if start < len(text) {
		f(text[start:], -1)
	}
}

// match returns the id of the longest allowed special token that prefixes
// s, or -1.
func (s *specialSet) match(text string, parseSpecial bool) int32 {
	for _, id := range s.byHead[text[0]] {
		if !parseSpecial && s.types[id] != TypeUserDefined {
			continue
		}
		if strings.HasPrefix(text, s.tokens[id]) {
			return id
		}
	}
	return -1
}

// sortedBySize returns ids ordered by decreasing text length, then id.
func sortedBySize(tokens []string, ids []int32) []int32 {
	slices.SortFunc(ids, func(a, b int32) int {
		if d := len(tokens[b]) - len(tokens[a]); d != 0 {
			return d
		}
		return int(a - b)
	})
	return ids
}
