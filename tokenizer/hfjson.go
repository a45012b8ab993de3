package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The vocabulary and merges of a tokenizer.json are a few hundred thousand
// small strings; encoding/json decodes them through reflection and an
// intermediate map several times slower than these direct scanners, which
// handle only the shapes tokenizer.json uses. The input has already been
// validated as JSON by encoding/json.

// jsonScanner walks a validated JSON value.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// expect skips white space and consumes c.
func (s *jsonScanner) expect(c byte) error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != c {
		return fmt.Errorf("%w: tokenizer.json: expected %q at offset %d", ErrFormat, c, s.i)
	}
	s.i++
	return nil
}

// peek skips white space and returns the next byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// str consumes a string; escapes are left to encoding/json.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			s.i++
			if !escaped {
				return string(s.b[start : s.i-1]), nil
			}
			var v string
			if err := json.Unmarshal(s.b[start-1:s.i], &v); err != nil {
				return "", fmt.Errorf("%w: tokenizer.json: %w", ErrFormat, err)
			}
			return v, nil
		}
		s.i++
	}
	return "", fmt.Errorf("%w: tokenizer.json: unterminated string", ErrFormat)
}

// integer consumes a non-negative integer that fits in an int.
func (s *jsonScanner) integer() (int, error) {
	s.ws()
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil {
		return 0, fmt.Errorf("%w: tokenizer.json: bad id at offset %d", ErrFormat, start)
	}
	return n, nil
}

// list consumes the elements of an array or object, calling elem for each
// until the closing bracket.
func (s *jsonScanner) list(open, close byte, elem func() error) error {
	if err := s.expect(open); err != nil {
		return err
	}
	if s.peek() == close {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return nil
		default:
			return fmt.Errorf("%w: tokenizer.json: expected ',' or %q at offset %d", ErrFormat, close, s.i)
		}
	}
}

// hfVocab is one "token": id entry of model.vocab.
type hfVocab struct {
	text string
	id   int
}

// parseHFVocab reads model.vocab, an object of token text to id.
func parseHFVocab(raw []byte) ([]hfVocab, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	s := &jsonScanner{b: raw}
	var out []hfVocab
	err := s.list('{', '}', func() error {
		text, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		id, err := s.integer()
		if err != nil {
			return err
		}
		out = append(out, hfVocab{text, id})
		return nil
	})
	return out, err
}

// parseHFMerges reads model.merges in either spelling: "left right"
// strings (older files) or ["left", "right"] pairs (newer ones); both
// become "left right".
func parseHFMerges(raw []byte) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	s := &jsonScanner{b: raw}
	var out []string
	err := s.list('[', ']', func() error {
		if s.peek() == '"' {
			m, err := s.str()
			out = append(out, m)
			return err
		}
		var pair []string
		err := s.list('[', ']', func() error {
			p, err := s.str()
			pair = append(pair, p)
			return err
		})
		if err != nil {
			return err
		}
		if len(pair) != 2 {
			return fmt.Errorf("%w: merge %d has %d parts", ErrFormat, len(out), len(pair))
		}
		out = append(out, pair[0]+" "+pair[1])
		return nil
	})
	return out, err
}
