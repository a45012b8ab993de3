package tokenizer

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteHuggingFace writes v, a gpt2 (byte-level BPE) vocabulary, as a
// Hugging Face tokenizer.json that LoadHuggingFace reads back to the same
// tokens, types, merges and pre-tokenizer: control tokens become special
// added tokens, user-defined ones plain added tokens, the rest the BPE
// vocabulary.
func WriteHuggingFace(w io.Writer, v *Vocab) error {
	if v.Model != ModelGPT2 {
		return fmt.Errorf("%w: tokenizer.json for a %q vocabulary (only %s)", ErrUnsupported, v.Model, ModelGPT2)
	}
	var regex string
	switch v.Pre {
	case PreQwen2:
		regex = regexQwen2
	case PreQwen35:
		regex = regexQwen35
	default:
		return fmt.Errorf("%w: %q", ErrPre, v.Pre)
	}
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var addedTokens []added
	vocab := orderedVocab{}
	for id, tok := range v.Tokens {
		typ := int32(TypeNormal)
		if v.Types != nil {
			typ = v.Types[id]
		}
		switch typ {
		case TypeControl, TypeUserDefined:
			addedTokens = append(addedTokens, added{ID: id, Content: tok, Special: typ == TypeControl})
		default:
			vocab = append(vocab, vocabEntry{tok, id})
		}
	}
	var normalizer any
	if v.NFC {
		normalizer = map[string]string{"type": "NFC"}
	}
	f := map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": addedTokens,
		"normalizer":   normalizer,
		"pre_tokenizer": map[string]any{
			"type": "Sequence",
			"pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]string{"Regex": regex}, "behavior": "Isolated", "invert": false},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
			},
		},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "", "end_of_word_suffix": "",
			"fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": vocab, "merges": v.Merges,
		},
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}

type vocabEntry struct {
	text string
	id   int
}

// orderedVocab marshals as a JSON object in id order, as HF writes it.
type orderedVocab []vocabEntry

func (o orderedVocab) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, e := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := marshalNoEscape(e.text)
		if err != nil {
			return nil, err
		}
		b = append(b, k...)
		b = append(b, ':')
		b = fmt.Appendf(b, "%d", e.id)
	}
	return append(b, '}'), nil
}

func marshalNoEscape(s string) ([]byte, error) {
	var b jsonBuf
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil // drop Encode's newline
}

type jsonBuf []byte

func (b *jsonBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
