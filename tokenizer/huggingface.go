package tokenizer

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// The pre-tokenizer regexes of Hugging Face tokenizer.json files that map
// to this package's scanners.
const (
	regexQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexQwen35 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// hfFile is the part of tokenizer.json that LoadHuggingFace reads.
type hfFile struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Special    bool   `json:"special"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
	} `json:"added_tokens"`
	Normalizer   *hfComponent `json:"normalizer"`
	PreTokenizer *hfComponent `json:"pre_tokenizer"`
	Decoder      *hfComponent `json:"decoder"`
	Model        struct {
		Type                    string          `json:"type"`
		Dropout                 *float64        `json:"dropout"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Vocab                   json.RawMessage `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
	} `json:"model"`
}

// hfComponent is a normalizer, pre-tokenizer or decoder entry.
type hfComponent struct {
	Type          string         `json:"type"`
	Normalizers   []*hfComponent `json:"normalizers"`
	PreTokenizers []*hfComponent `json:"pretokenizers"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
	UseRegex *bool  `json:"use_regex"`
}

// FromHuggingFace builds a Tokenizer from a Hugging Face tokenizer.json; see
// LoadHuggingFace.
func FromHuggingFace(tokenizerJSON io.Reader) (*Tokenizer, error) {
	v, err := LoadHuggingFace(tokenizerJSON)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// LoadHuggingFace reads a Hugging Face tokenizer.json and returns the
// equivalent gpt2 Vocab. It accepts what Qwen2, Qwen3 and Qwen3.5 ship: a
// byte-level BPE model, an optional NFC normalizer, a Split pre-tokenizer
// with the qwen2 or qwen35 regex followed by ByteLevel, and a ByteLevel
// decoder; anything else is refused with ErrUnsupported. Added tokens
// marked special become control tokens, the others user-defined ones.
//
// tokenizer.json does not name BOS and EOS (tokenizer_config.json does),
// so they are -1 in the result and the caller may set them.
func LoadHuggingFace(tokenizerJSON io.Reader) (*Vocab, error) {
	var f hfFile
	if err := json.NewDecoder(tokenizerJSON).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %w", ErrFormat, err)
	}
	m := &f.Model
	if m.Type != "BPE" {
		return nil, fmt.Errorf("%w: model type %q (need BPE)", ErrUnsupported, m.Type)
	}
	switch {
	case m.ByteFallback:
		return nil, fmt.Errorf("%w: BPE byte_fallback", ErrUnsupported)
	case m.IgnoreMerges:
		return nil, fmt.Errorf("%w: BPE ignore_merges", ErrUnsupported)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("%w: BPE dropout", ErrUnsupported)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("%w: BPE subword prefix or suffix", ErrUnsupported)
	}
	v := &Vocab{Model: ModelGPT2, BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	var err error
	if v.NFC, err = hfNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if v.Pre, err = hfPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if f.Decoder == nil || f.Decoder.Type != "ByteLevel" {
		return nil, fmt.Errorf("%w: decoder must be ByteLevel", ErrUnsupported)
	}

	vocab, err := parseHFVocab(m.Vocab)
	if err != nil {
		return nil, err
	}
	// Ids must be dense; bounding them by the number of entries keeps a
	// hostile file from sizing the token table.
	limit := len(vocab) + len(f.AddedTokens)
	n := 0
	for _, e := range vocab {
		if e.id >= limit {
			return nil, fmt.Errorf("%w: token %q has id %d", ErrFormat, e.text, e.id)
		}
		n = max(n, e.id+1)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= limit {
			return nil, fmt.Errorf("%w: added token %q has id %d", ErrFormat, a.Content, a.ID)
		}
		n = max(n, a.ID+1)
	}
	v.Tokens = make([]string, n)
	v.Types = make([]int32, n)
	for _, e := range vocab {
		if v.Types[e.id] != 0 {
			return nil, fmt.Errorf("%w: id %d used twice", ErrFormat, e.id)
		}
		v.Tokens[e.id] = e.text
		v.Types[e.id] = TypeNormal
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return nil, fmt.Errorf("%w: added token %q with single_word, lstrip or rstrip", ErrUnsupported, a.Content)
		}
		v.Tokens[a.ID] = a.Content
		v.Types[a.ID] = TypeUserDefined
		if a.Special {
			v.Types[a.ID] = TypeControl
		}
	}
	for id, typ := range v.Types {
		if typ == 0 {
			return nil, fmt.Errorf("%w: no token has id %d", ErrFormat, id)
		}
	}
	if m.UnkToken != nil {
		i := slices.IndexFunc(vocab, func(e hfVocab) bool { return e.text == *m.UnkToken })
		if i < 0 {
			return nil, fmt.Errorf("%w: unk_token %q not in vocabulary", ErrFormat, *m.UnkToken)
		}
		v.UNK = vocab[i].id
	}
	if v.Merges, err = parseHFMerges(m.Merges); err != nil {
		return nil, err
	}
	return v, nil
}

// hfNormalizer reports whether the normalizer is NFC; no normalizer is
// fine too, anything else is not supported.
func hfNormalizer(c *hfComponent) (bool, error) {
	if c == nil {
		return false, nil
	}
	switch c.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		nfc := false
		for _, n := range c.Normalizers {
			ok, err := hfNormalizer(n)
			if err != nil {
				return false, err
			}
			nfc = nfc || ok
		}
		return nfc, nil
	}
	return false, fmt.Errorf("%w: normalizer %q", ErrUnsupported, c.Type)
}

// hfPreTokenizer maps the pre-tokenizer to a Vocab.Pre name.
func hfPreTokenizer(c *hfComponent) (string, error) {
	if c == nil || c.Type != "Sequence" || len(c.PreTokenizers) != 2 {
		return "", fmt.Errorf("%w: pre_tokenizer must be Split then ByteLevel", ErrUnsupported)
	}
	split, bl := c.PreTokenizers[0], c.PreTokenizers[1]
	if split == nil || split.Type != "Split" || split.Behavior != "Isolated" || split.Invert || split.Pattern.Regex == nil {
		return "", fmt.Errorf("%w: pre_tokenizer must start with an isolating regex Split", ErrUnsupported)
	}
	if bl == nil || bl.Type != "ByteLevel" || bl.UseRegex == nil || *bl.UseRegex {
		return "", fmt.Errorf("%w: pre_tokenizer must end with ByteLevel without regex", ErrUnsupported)
	}
	switch *split.Pattern.Regex {
	case regexQwen2:
		return PreQwen2, nil
	case regexQwen35:
		return PreQwen35, nil
	}
	return "", fmt.Errorf("%w: Split regex %q (known: the %s and %s regexes)", ErrPre, *split.Pattern.Regex, PreQwen2, PreQwen35)
}
