package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"trit/gguf"
)

// maxJSON bounds every JSON file read from a checkpoint folder (the
// tokenizer.json of a 250k vocabulary is about 12 MB).
const maxJSON = 256 << 20

// ErrConfig is wrapped by errors about a checkpoint's config.json.
var ErrConfig = errors.New("checkpoint: bad config.json")

// ErrUnsupported is wrapped by errors about checkpoints trit cannot run.
var ErrUnsupported = errors.New("checkpoint: unsupported")

// readJSON decodes the JSON file dir/name into v; a missing file is
// reported as fs.ErrNotExist.
func readJSON(dir, name string, v any) error {
	fd, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer fd.Close()
	if err := json.NewDecoder(io.LimitReader(fd, maxJSON)).Decode(v); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", name, err)
	}
	return nil
}

// config is config.json as a generic object: the text model's keys, with
// text_config's (multimodal checkpoints, Qwen3.5) over the top level's.
type config map[string]any

func readConfig(dir string) (config, error) {
	var top map[string]any
	if err := readJSON(dir, "config.json", &top); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s has no config.json", ErrConfig, dir)
		}
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	c := config{}
	for k, v := range top {
		c[k] = v
	}
	if tc, ok := top["text_config"].(map[string]any); ok {
		for k, v := range tc {
			c[k] = v
		}
		c["model_type"] = top["model_type"] // the pack's, not qwen3_5_text
		if rp, ok := tc["rope_parameters"].(map[string]any); ok {
			c["rope_parameters"] = rp
		}
	}
	return c, nil
}

func (c config) num(key string) (float64, bool) {
	v, ok := c[key].(float64)
	return v, ok
}

// int returns a non-negative integer key; a present key of another kind
// is an error.
func (c config) int(key string) (int, bool, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > 1<<31 {
		return 0, false, fmt.Errorf("%w: %s = %v is not a non-negative integer", ErrConfig, key, v)
	}
	return int(f), true, nil
}

func (c config) str(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c config) bool(key string) (bool, bool) {
	b, ok := c[key].(bool)
	return b, ok
}

// ropeTheta is rope_theta, or rope_parameters.rope_theta (newer configs).
func (c config) rope(key string) (float64, bool) {
	if v, ok := c.num(key); ok {
		return v, true
	}
	if rp, ok := c["rope_parameters"].(map[string]any); ok {
		v, ok := rp[key].(float64)
		return v, ok
	}
	return 0, false
}

// archOf maps config.json's model_type onto a GGUF architecture.
func archOf(c config) (string, error) {
	switch t := c.str("model_type"); t {
	case "qwen3":
		return "qwen3", nil
	case "llama":
		return "llama", nil
	case "qwen3_5", "qwen3_5_text", "prism_hadamard_qwen35":
		return "qwen35", nil
	default:
		return "", fmt.Errorf("%w: model_type %q (known: qwen3, llama, qwen3_5, prism_hadamard_qwen35)", ErrUnsupported, t)
	}
}

// hyperparameters translates config.json into the `<arch>.*` keys
// llama.cpp's converter writes.
func hyperparameters(c config, arch string) ([]gguf.KV, error) {
	var kvs []gguf.KV
	var err error
	u32 := func(key, from string, required bool) int {
		if err != nil {
			return 0
		}
		v, ok, e := c.int(from)
		if e != nil {
			err = e
			return 0
		}
		if !ok {
			if required {
				err = fmt.Errorf("%w: %s is missing", ErrConfig, from)
			}
			return 0
		}
		kvs = append(kvs, gguf.KV{Key: arch + "." + key, Value: gguf.Uint32(uint32(v))})
		return v
	}
	f32 := func(key string, v float64) {
		kvs = append(kvs, gguf.KV{Key: arch + "." + key, Value: gguf.Float32(float32(v))})
	}
	ctx := u32("context_length", "max_position_embeddings", false)
	hidden := u32("embedding_length", "hidden_size", true)
	u32("block_count", "num_hidden_layers", true)
	u32("feed_forward_length", "intermediate_size", true)
	heads := u32("attention.head_count", "num_attention_heads", true)
	u32("attention.head_count_kv", "num_key_value_heads", false)
	if err != nil {
		return nil, err
	}
	headDim, ok, e := c.int("head_dim")
	if e != nil {
		return nil, e
	}
	if !ok && heads > 0 {
		headDim = hidden / heads
	}
	kvs = append(kvs, gguf.KV{Key: arch + ".attention.key_length", Value: gguf.Uint32(uint32(headDim))},
		gguf.KV{Key: arch + ".attention.value_length", Value: gguf.Uint32(uint32(headDim))})
	if v, ok := c.num("rms_norm_eps"); ok {
		f32("attention.layer_norm_rms_epsilon", v)
	}
	if v, ok := c.rope("rope_theta"); ok {
		f32("rope.freq_base", v)
	}
	if ctx == 0 {
		kvs = append(kvs, gguf.KV{Key: arch + ".context_length", Value: gguf.Uint32(4096)})
	}
	if arch == "qwen35" {
		u32("ssm.conv_kernel", "linear_conv_kernel_dim", true)
		dk := u32("ssm.state_size", "linear_key_head_dim", true)
		u32("ssm.group_count", "linear_num_key_heads", true)
		hv := u32("ssm.time_step_rank", "linear_num_value_heads", true)
		if err != nil {
			return nil, err
		}
		dv, ok, e := c.int("linear_value_head_dim")
		if e != nil {
			return nil, e
		}
		if ok && dv != dk {
			return nil, fmt.Errorf("%w: linear value head dim %d differs from key head dim %d", ErrUnsupported, dv, dk)
		}
		kvs = append(kvs, gguf.KV{Key: arch + ".ssm.inner_size", Value: gguf.Uint32(uint32(hv * dk))})
		interval := 4
		if v, ok, e := c.int("full_attention_interval"); e != nil {
			return nil, e
		} else if ok {
			interval = v
		}
		kvs = append(kvs, gguf.KV{Key: arch + ".full_attention_interval", Value: gguf.Uint32(uint32(interval))})
		partial := 1.0
		if v, ok := c.rope("partial_rotary_factor"); ok {
			partial = v
		}
		kvs = append(kvs, gguf.KV{Key: arch + ".rope.dimension_count", Value: gguf.Uint32(uint32(float64(headDim) * partial))})
		sections := []int32{0, 0, 0, 0}
		if rp, ok := c["rope_parameters"].(map[string]any); ok {
			if ms, ok := rp["mrope_section"].([]any); ok {
				for i, s := range ms {
					if f, ok := s.(float64); ok && i < 4 {
						sections[i] = int32(f)
					}
				}
			}
		}
		kvs = append(kvs, gguf.KV{Key: arch + ".rope.dimension_sections", Value: gguf.Array(sections)})
	}
	if err := ropeScaling(c, arch, &kvs); err != nil {
		return nil, err
	}
	return kvs, err
}

// ropeScaling translates rope_scaling (YaRN, linear) into rope.scaling.*.
func ropeScaling(c config, arch string, kvs *[]gguf.KV) error {
	rs, ok := c["rope_scaling"].(map[string]any)
	if !ok {
		return nil
	}
	typ, _ := rs["rope_type"].(string)
	if typ == "" {
		typ, _ = rs["type"].(string)
	}
	switch typ {
	case "", "default":
		return nil
	case "linear", "yarn":
	default:
		return fmt.Errorf("%w: rope_scaling type %q", ErrUnsupported, typ)
	}
	factor, _ := rs["factor"].(float64)
	*kvs = append(*kvs, gguf.KV{Key: arch + ".rope.scaling.type", Value: gguf.String(typ)},
		gguf.KV{Key: arch + ".rope.scaling.factor", Value: gguf.Float32(float32(factor))})
	if orig, ok := rs["original_max_position_embeddings"].(float64); ok {
		*kvs = append(*kvs, gguf.KV{Key: arch + ".rope.scaling.original_context_length", Value: gguf.Uint32(uint32(orig))})
	}
	return nil
}
