package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"trit/gguf"
	"trit/tokenizer"
)

// metadata builds the GGUF keys of the checkpoint: architecture,
// hyperparameters, tokenizer, chat template and sampling defaults, as
// llama.cpp's convert_hf_to_gguf.py writes them.
func (s *source) metadata(dir string, c config, arch string) ([]gguf.KV, error) {
	kvs := []gguf.KV{{Key: "general.architecture", Value: gguf.String(arch)}}
	if n := c.str("_name_or_path"); n != "" {
		kvs = append(kvs, gguf.KV{Key: "general.name", Value: gguf.String(filepath.Base(n))})
	} else {
		kvs = append(kvs, gguf.KV{Key: "general.name", Value: gguf.String(filepath.Base(dir))})
	}
	hp, err := hyperparameters(c, arch)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, hp...)
	hk, err := s.hadamardKeys(dir, c, family(arch))
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, hk...)
	tk, err := tokenizerKeys(dir, c)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, tk...)
	return append(kvs, samplingKeys(dir)...), nil
}

// tokenizerKeys translates tokenizer.json and tokenizer_config.json into
// tokenizer.ggml.* keys and tokenizer.chat_template. A folder without
// tokenizer.json has no tokenizer keys (the model still loads).
func tokenizerKeys(dir string, c config) ([]gguf.KV, error) {
	fd, err := os.Open(filepath.Join(dir, "tokenizer.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	v, err := tokenizer.LoadHuggingFace(fd)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: tokenizer.json: %w", err)
	}
	var tc map[string]any
	if err := readJSON(dir, "tokenizer_config.json", &tc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	id := func(key string) int {
		name := tc[key]
		if m, ok := name.(map[string]any); ok {
			name = m["content"]
		}
		str, _ := name.(string)
		for i, t := range v.Tokens {
			if t == str && str != "" {
				return i
			}
		}
		return -1
	}
	if v.BOS = id("bos_token"); v.BOS < 0 {
		if b, ok, _ := c.int("bos_token_id"); ok && b < len(v.Tokens) {
			v.BOS = b
		}
	}
	if v.EOS = id("eos_token"); v.EOS < 0 {
		if e, ok, _ := c.int("eos_token_id"); ok && e < len(v.Tokens) {
			v.EOS = e
		}
	}
	v.PAD = id("pad_token")
	kvs := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.String(v.Model)},
		{Key: "tokenizer.ggml.pre", Value: gguf.String(v.Pre)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Array(v.Tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Array(v.Types)},
		{Key: "tokenizer.ggml.merges", Value: gguf.Array(v.Merges)},
	}
	for _, sp := range []struct {
		key string
		id  int
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"padding", v.PAD}} {
		if sp.id >= 0 {
			kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml." + sp.key + "_token_id", Value: gguf.Uint32(uint32(sp.id))})
		}
	}
	addBOS := false
	if b, ok := tc["add_bos_token"].(bool); ok {
		addBOS = b
	}
	kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(addBOS)})
	tmpl, _ := tc["chat_template"].(string)
	if b, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		tmpl = string(b)
	}
	if tmpl != "" {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: gguf.String(tmpl)})
	}
	return kvs, nil
}

// samplingKeys translates generation_config.json into general.sampling.*.
func samplingKeys(dir string) []gguf.KV {
	var gc map[string]any
	if readJSON(dir, "generation_config.json", &gc) != nil {
		return nil
	}
	var kvs []gguf.KV
	if v, ok := gc["temperature"].(float64); ok {
		kvs = append(kvs, gguf.KV{Key: "general.sampling.temp", Value: gguf.Float32(float32(v))})
	}
	if v, ok := gc["top_k"].(float64); ok && v >= 0 && v < 1<<31 {
		kvs = append(kvs, gguf.KV{Key: "general.sampling.top_k", Value: gguf.Int32(int32(v))})
	}
	if v, ok := gc["top_p"].(float64); ok {
		kvs = append(kvs, gguf.KV{Key: "general.sampling.top_p", Value: gguf.Float32(float32(v))})
	}
	return kvs
}
