package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Decode returns the text of ids. Control, unknown and unused tokens are
// omitted, byte tokens become raw bytes, and for a llama vocabulary with a
// dummy prefix the piece right after BOS loses its leading space (as
// llama2.c's run.c and llama.cpp do). Ids outside the vocabulary are
// skipped. The result may contain invalid UTF-8 when ids split a character.
func (t *Tokenizer) Decode(ids []int) string {
	var sb strings.Builder
	sb.Grow(4 * len(ids)) // a typical token is a few bytes
	prev := -1
	for _, id := range ids {
		sb.WriteString(t.piece(prev, id))
		prev = id
	}
	return sb.String()
}

// piece returns the decoded bytes of id following prev.
func (t *Tokenizer) piece(prev, id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	p := t.pieces[id]
	if prev == t.bos && prev >= 0 && t.model == ModelLlama && t.addSpacePrefix && t.types[id] == TypeNormal {
		p = strings.TrimPrefix(p, " ")
	}
	return p
}

// A Decoder turns a stream of ids into text without ever splitting a UTF-8
// character: bytes of an incomplete character are held back until the
// tokens that complete it arrive. A Decoder is not safe for concurrent use.
type Decoder struct {
	t       *Tokenizer
	prev    int
	pending []byte
}

// NewDecoder returns a Decoder for t.
func (t *Tokenizer) NewDecoder() *Decoder {
	return &Decoder{t: t, prev: -1}
}

// Add decodes id and returns the text that is now complete, possibly "".
// Bytes that can never start a valid character are passed through as they
// are, so nothing is held back for longer than one character.
func (d *Decoder) Add(id int) string {
	p := d.t.piece(d.prev, id)
	d.prev = id
	if len(d.pending) == 0 && completeUTF8(p) == len(p) {
		return p
	}
	d.pending = append(d.pending, p...)
	n := completeUTF8(string(d.pending))
	out := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Flush returns the bytes still held back (an incomplete character) and
// resets the Decoder for a new sequence.
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	d.prev = -1
	return out
}

// completeUTF8 returns the length of the longest prefix of s that does not
// end inside a character that later bytes could still complete.
func completeUTF8(s string) int {
	// A character is at most 4 bytes, so only the last 3 can be a partial one.
	for k := len(s) - 1; k >= 0 && k >= len(s)-3; k-- {
		if !utf8.RuneStart(s[k]) {
			continue
		}
		if utf8.FullRuneInString(s[k:]) {
			return len(s)
		}
		return k
	}
	return len(s)
}
