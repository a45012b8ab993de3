package tokenizer

import "fmt"

// Metadata is the typed key lookup FromMetadata needs; *gguf.Metadata
// implements it. Each method reports false when the key is absent or of
// another type.
type Metadata interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Floats(key string) ([]float64, bool)
	Ints(key string) ([]int64, bool)
	Uint(key string) (uint64, bool)
	Bool(key string) (bool, bool)
}

// FromMetadata builds the tokenizer a model describes in its GGUF
// `tokenizer.ggml.*` keys (model sources of other containers translate
// their tokenizer files into those keys).
func FromMetadata(f Metadata) (*Tokenizer, error) {
	v, err := VocabFromMetadata(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// VocabFromMetadata reads the vocabulary of the `tokenizer.ggml.*` keys,
// with the defaults llama.cpp applies to absent ones.
func VocabFromMetadata(f Metadata) (*Vocab, error) {
	v := &Vocab{BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	var ok bool
	if v.Model, ok = f.String("tokenizer.ggml.model"); !ok {
		return nil, fmt.Errorf("tokenizer: model has no tokenizer (tokenizer.ggml.model missing)")
	}
	v.Pre, _ = f.String("tokenizer.ggml.pre")
	if v.Tokens, ok = f.Strings("tokenizer.ggml.tokens"); !ok {
		return nil, fmt.Errorf("tokenizer: model has no tokenizer.ggml.tokens")
	}
	if s, ok := f.Floats("tokenizer.ggml.scores"); ok {
		v.Scores = make([]float32, len(s))
		for i, x := range s {
			v.Scores[i] = float32(x)
		}
	}
	if t, ok := f.Ints("tokenizer.ggml.token_type"); ok {
		v.Types = make([]int32, len(t))
		for i, x := range t {
			v.Types[i] = int32(x)
		}
	}
	v.Merges, _ = f.Strings("tokenizer.ggml.merges")
	id := func(key string) int {
		if x, ok := f.Uint(key); ok && x < uint64(len(v.Tokens)) {
			return int(x)
		}
		return -1
	}
	v.BOS = id("tokenizer.ggml.bos_token_id")
	v.EOS = id("tokenizer.ggml.eos_token_id")
	v.PAD = id("tokenizer.ggml.padding_token_id")
	v.UNK = id("tokenizer.ggml.unknown_token_id")
	switch v.Model {
	case "llama":
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		v.AddBOS = false
	}
	if b, ok := f.Bool("tokenizer.ggml.add_bos_token"); ok {
		v.AddBOS = b
	}
	if b, ok := f.Bool("tokenizer.ggml.add_space_prefix"); ok {
		v.AddSpacePrefix = b
	}
	return v, nil
}

// EndOfGeneration lists the token ids that end a generation: the EOS and
// EOT tokens the metadata names, and control tokens such as <|im_end|> and
// <|endoftext|> that chat models emit at the end of a turn.
func EndOfGeneration(f Metadata, tok *Tokenizer) []int {
	seen := map[int]bool{}
	var ids []int
	add := func(i int) {
		if i >= 0 && !seen[i] {
			seen[i] = true
			ids = append(ids, i)
		}
	}
	for _, k := range []string{"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		if x, ok := f.Uint(k); ok && x < 1<<31 {
			add(int(x))
		}
	}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "</s>"} {
		if i, ok := tok.TokenID(s); ok {
			add(i)
		}
	}
	return ids
}
