// Package tokenizer turns text into token ids and back for the vocabularies
// used by trit's models: byte-level BPE ("gpt2" in GGUF, as in Qwen2, Qwen3
// and Qwen3.5) and SentencePiece-style BPE with scores ("llama" in GGUF, as
// in llama2.c).
//
// A Tokenizer is built from a Vocab, which mirrors the tokenizer.ggml.*
// metadata of a GGUF file, or from a Hugging Face tokenizer.json. It is safe
// for concurrent use.
package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Token types, as stored in GGUF's tokenizer.ggml.token_type.
const (
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// Model names accepted in Vocab.Model.
const (
	ModelGPT2  = "gpt2"  // byte-level BPE ranked by merges
	ModelLlama = "llama" // SentencePiece-style BPE ranked by scores
)

// Pre-tokenizer names accepted in Vocab.Pre for the gpt2 model.
const (
	PreQwen2  = "qwen2"  // Qwen2 and Qwen3
	PreQwen35 = "qwen35" // Qwen3.5 and Qwen3.6: letter runs absorb combining marks
)

var (
	// ErrModel reports a Vocab.Model other than ModelGPT2 or ModelLlama.
	ErrModel = errors.New("tokenizer: unknown model (known: " + ModelGPT2 + ", " + ModelLlama + ")")
	// ErrPre reports an unsupported pre-tokenizer for the gpt2 model.
	ErrPre = errors.New("tokenizer: unsupported pre-tokenizer (known: " + PreQwen2 + ", " + PreQwen35 + ")")
	// ErrEmpty reports a vocabulary without tokens.
	ErrEmpty = errors.New("tokenizer: empty vocabulary")
	// ErrFormat reports a malformed tokenizer file.
	ErrFormat = errors.New("tokenizer: malformed tokenizer file")
	// ErrUnsupported reports a tokenizer file using a feature this package
	// does not implement.
	ErrUnsupported = errors.New("tokenizer: unsupported tokenizer feature")
)

// A LengthError reports a per-token table whose length differs from the
// number of tokens.
type LengthError struct {
	Field       string // "Scores" or "Types"
	Len, Tokens int
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("tokenizer: %s has %d entries for %d tokens", e.Field, e.Len, e.Tokens)
}

// An IDError reports a special token id outside the vocabulary.
type IDError struct {
	Field string // "BOS", "EOS", "PAD" or "UNK"
	ID    int
	Size  int
}

func (e *IDError) Error() string {
	return fmt.Sprintf("tokenizer: %s id %d outside vocabulary of %d tokens", e.Field, e.ID, e.Size)
}

// A MergeError reports a merge rule that cannot be applied to the
// vocabulary.
type MergeError struct {
	Index  int    // position in Vocab.Merges
	Merge  string // the rule as given
	Reason string
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("tokenizer: merge %d %q: %s", e.Index, e.Merge, e.Reason)
}

// Vocab describes a vocabulary the way GGUF's tokenizer.ggml.* keys do.
// New takes every field literally: defaults that GGUF readers apply when a
// key is absent (llama.cpp adds a space prefix and a BOS for "llama"
// vocabularies) are the caller's to fill in.
type Vocab struct {
	Model  string    // ModelGPT2 or ModelLlama
	Pre    string    // pre-tokenizer of the gpt2 model: PreQwen2 or PreQwen35
	Tokens []string  // token text by id; byte-level encoded for gpt2, "▁" for spaces for llama
	Scores []float32 // llama: merge priority of each token (nil = all zero)
	Types  []int32   // token types, TypeNormal etc. (nil = all normal)
	Merges []string  // gpt2: "left right" merge rules, best first

	BOS, EOS, PAD, UNK int // special token ids, -1 when absent

	AddBOS         bool // Encode with AddBOS prepends BOS only when this is set
	AddSpacePrefix bool // llama: prepend " " to text (SentencePiece's dummy prefix)
	NFC            bool // normalise text to Unicode NFC before pre-tokenisation
}

// A Tokenizer encodes text to token ids and decodes ids to text.
type Tokenizer struct {
	model          string
	tokens         []string
	types          []int32
	scores         []float32
	ids            map[string]int32
	pieces         []string // decoded bytes of each token for Decode ("" for hidden ones)
	byteTok        [256]int32
	merges         map[uint64]uint64 // gpt2: left<<32|right -> rank<<32|merged
	scan           func(s string, i int) int
	special        specialSet
	bos, eos       int
	pad, unk       int
	addBOS         bool
	addSpacePrefix bool
	nfc            bool

	mu    sync.Mutex
	cache map[string][]int32 // gpt2: BPE result per pre-token
}

// EncodeOptions controls Encode.
type EncodeOptions struct {
	// AddBOS prepends the BOS token when the vocabulary asks for one
	// (Vocab.AddBOS) and has one. Qwen vocabularies declare a BOS id but do
	// not ask for it, so AddBOS adds nothing there, as in llama.cpp.
	AddBOS bool
	// ParseSpecial matches the text of control tokens (such as
	// "<|im_start|>") verbatim in the input. User-defined tokens are always
	// matched, as in llama.cpp and Hugging Face tokenizers.
	ParseSpecial bool
}

// New builds a Tokenizer from v. It keeps references to v's slices, which
// must not be modified afterwards.
func New(v *Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, ErrEmpty
	}
	if n > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer: %d tokens is too many", n)
	}
	t := &Tokenizer{
		model:          v.Model,
		tokens:         v.Tokens,
		scores:         v.Scores,
		bos:            v.BOS,
		eos:            v.EOS,
		pad:            v.PAD,
		unk:            v.UNK,
		addBOS:         v.AddBOS,
		addSpacePrefix: v.AddSpacePrefix,
		nfc:            v.NFC,
	}
	switch v.Model {
	case ModelGPT2:
		switch v.Pre {
		case PreQwen2:
			t.scan = scanQwen2
		case PreQwen35:
			t.scan = scanQwen35
		default:
			return nil, fmt.Errorf("%w: %q", ErrPre, v.Pre)
		}
	case ModelLlama:
	default:
		return nil, fmt.Errorf("%w: %q", ErrModel, v.Model)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, &LengthError{"Scores", len(v.Scores), n}
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, &LengthError{"Types", len(v.Types), n}
	}
	t.types = v.Types
	if t.types == nil {
		t.types = make([]int32, n)
		for i := range t.types {
			t.types[i] = TypeNormal
		}
	}
	for _, s := range []struct {
		name string
		id   int
	}{{"BOS", v.BOS}, {"EOS", v.EOS}, {"PAD", v.PAD}, {"UNK", v.UNK}} {
		if s.id < -1 || s.id >= n {
			return nil, &IDError{s.name, s.id, n}
		}
	}

	// Later duplicates win, as in llama.cpp's token_to_id.
	t.ids = make(map[string]int32, n)
	for i, s := range v.Tokens {
		t.ids[s] = int32(i)
	}
	for b := range t.byteTok {
		t.byteTok[b] = -1
	}
	t.pieces = make([]string, n)
	if v.Model == ModelGPT2 {
		t.initByteLevel()
		if err := t.initMerges(v.Merges); err != nil {
			return nil, err
		}
		t.cache = make(map[string][]int32)
	} else {
		t.initLlama()
	}
	t.special = newSpecialSet(t.tokens, t.types)
	return t, nil
}

// initByteLevel fills the byte tokens and decoded pieces of a gpt2 vocabulary.
func (t *Tokenizer) initByteLevel() {
	var sb strings.Builder
	for b := range 256 {
		if id, ok := t.ids[string(byteToRune[b])]; ok {
			t.byteTok[b] = id
		}
	}
	for id, s := range t.tokens {
		switch t.types[id] {
		case TypeControl, TypeUnknown, TypeUnused:
			// Hidden from Decode, as llama.cpp does without "special".
		case TypeUserDefined:
			t.pieces[id] = s
		default:
			sb.Reset()
			for _, r := range s {
				if b, ok := runeToByte(r); ok {
					sb.WriteByte(b)
				} else {
					sb.WriteRune(r)
				}
			}
			t.pieces[id] = sb.String()
		}
	}
}

// initMerges parses the "left right" rules into the pair map.
func (t *Tokenizer) initMerges(merges []string) error {
	t.merges = make(map[uint64]uint64, len(merges))
	var buf []byte
	for rank, m := range merges {
		// The separator is the first space after the first byte, so a left
		// side that is itself a space still parses (llama.cpp does the same).
		k := -1
		if len(m) > 1 {
			k = strings.IndexByte(m[1:], ' ')
		}
		if k < 0 {
			return &MergeError{rank, m, "no space separator"}
		}
		k++
		l, r := m[:k], m[k+1:]
		li, ok1 := t.ids[l]
		ri, ok2 := t.ids[r]
		if !ok1 || !ok2 {
			return &MergeError{rank, m, "side not in vocabulary"}
		}
		buf = append(append(buf[:0], l...), r...)
		mi, ok := t.ids[string(buf)]
		if !ok {
			return &MergeError{rank, m, "result not in vocabulary"}
		}
		key := uint64(li)<<32 | uint64(ri)
		if _, dup := t.merges[key]; !dup { // the first (best) rank wins
			t.merges[key] = uint64(rank)<<32 | uint64(mi)
		}
	}
	return nil
}

// initLlama fills the byte tokens and decoded pieces of a llama vocabulary.
func (t *Tokenizer) initLlama() {
	for id, s := range t.tokens {
		if b, ok := parseByteToken(s); ok && (t.types[id] == TypeByte || t.types[id] == TypeNormal) {
			if t.types[id] == TypeByte || t.byteTok[b] < 0 {
				t.byteTok[b] = int32(id)
			}
		}
	}
	for id, s := range t.tokens {
		switch t.types[id] {
		case TypeControl, TypeUnknown, TypeUnused:
		case TypeUserDefined:
			t.pieces[id] = s
		case TypeByte:
			if b, ok := parseByteToken(s); ok {
				t.pieces[id] = string([]byte{b})
			} else {
				t.pieces[id] = s
			}
		default:
			// Without token types a "<0xXX>" token is still the byte.
			if b, ok := parseByteToken(s); ok && t.byteTok[b] == int32(id) {
				t.pieces[id] = string([]byte{b})
			} else {
				t.pieces[id] = strings.ReplaceAll(s, "▁", " ")
			}
		}
	}
}

// parseByteToken recognises SentencePiece byte tokens "<0xXX>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(s[3])
	lo, ok2 := hexVal(s[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// VocabSize returns the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Token returns the text of token id as stored in the vocabulary (byte-level
// or "▁"-escaped), or "" when id is out of range.
func (t *Tokenizer) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenID returns the id of the token whose stored text is s.
func (t *Tokenizer) TokenID(s string) (int, bool) {
	id, ok := t.ids[s]
	return int(id), ok
}

// Type returns the type of token id (TypeNormal etc.), or 0 when id is out
// of range.
func (t *Tokenizer) Type(id int) int {
	if id < 0 || id >= len(t.types) {
		return 0
	}
	return int(t.types[id])
}

// IsControl reports whether id is a control token (such as BOS, EOS or
// "<|im_end|>"). Decode omits control tokens.
func (t *Tokenizer) IsControl(id int) bool { return t.Type(id) == TypeControl }

// BOS returns the beginning-of-sequence id, or -1.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS returns the end-of-sequence id, or -1.
func (t *Tokenizer) EOS() int { return t.eos }

// PAD returns the padding id, or -1.
func (t *Tokenizer) PAD() int { return t.pad }

// UNK returns the unknown-token id, or -1.
func (t *Tokenizer) UNK() int { return t.unk }

// Model returns the vocabulary's model, ModelGPT2 or ModelLlama.
func (t *Tokenizer) Model() string { return t.model }

// AddsBOS reports whether Encode with AddBOS prepends BOS: the vocabulary
// asks for it and has one.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS && t.bos >= 0 }

// Encode returns the token ids of text. Special tokens are matched first
// (see EncodeOptions); each run of text between them is normalised to NFC
// when the vocabulary asks for it, then split by the pre-tokenizer and
// merged by BPE (gpt2), or escaped with "▁", given the dummy prefix when it
// starts the text or follows a special token, and merged by score with
// byte fallback (llama), as llama.cpp does.
func (t *Tokenizer) Encode(text string, opts EncodeOptions) []int {
	var out []int
	if opts.AddBOS && t.AddsBOS() {
		out = append(out, t.bos)
	}
	prevSpecial := true // llama: the dummy prefix goes before the first text
	t.special.split(text, opts.ParseSpecial, func(frag string, id int32) {
		if id >= 0 {
			out = append(out, int(id))
			prevSpecial = true
			return
		}
		if t.nfc {
			frag = nfc(frag)
		}
		if t.model == ModelGPT2 {
			out = t.encodeByteLevel(out, frag)
		} else {
			out = t.encodeLlama(out, frag, prevSpecial && t.addSpacePrefix)
		}
		prevSpecial = false
	})
	return out
}
