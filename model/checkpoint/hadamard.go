package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"trit/gguf"
	"trit/hadamard"
)

// HadamardFile names the rotation contract of a Bonsai 2 MLX pack.
const HadamardFile = "hadamard.json"

// PackModule is one entry of a Bonsai 2 pack's config.json "modules": a
// rotated module, its Hadamard block size and whether it is the embedding
// (rotated on its output, so inverted after the lookup).
type PackModule struct {
	Path      string `json:"path"`
	DType     string `json:"dtype"`
	Block     int    `json:"block"`
	Embedding bool   `json:"embedding"`
}

// hadamardKeys translates a rotated pack (hadamard.json, the config's
// modules list, the .signs tensors) into the prism.hadamard.* keys of the
// GGUF contract, which model/qwen35 reads through package hadamard. A
// pack without hadamard.json has none.
func (s *source) hadamardKeys(dir string, c config, fam string) ([]gguf.KV, error) {
	var h map[string]any
	if err := readJSON(dir, HadamardFile, &h); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if c.str("model_type") == "prism_hadamard_qwen35" {
				return nil, fmt.Errorf("%w: a prism_hadamard_qwen35 pack without %s", ErrConfig, HadamardFile)
			}
			return nil, nil
		}
		return nil, err
	}
	get := func(k string) any {
		if v, ok := h[k]; ok {
			return v
		}
		return h[hadamard.KeyPrefix+k]
	}
	num := func(k string) (uint32, error) {
		v, ok := get(k).(float64)
		if !ok || v < 0 || v > hadamard.MaxWidth || v != float64(uint32(v)) {
			return 0, fmt.Errorf("%w: %s: %s is %v", ErrConfig, HadamardFile, k, get(k))
		}
		return uint32(v), nil
	}
	str := func(k string) string { v, _ := get(k).(string); return v }
	version, err := num("version")
	if err != nil {
		return nil, err
	}
	block, err := num("block_size")
	if err != nil {
		return nil, err
	}
	mode := str("sign_mode")
	grouped, _ := get("gdn_v_grouped").(bool)
	if s.layout.GroupedVHeads {
		grouped = true // every value-head tensor of the pack is grouped
	}
	raw, _ := c["modules"].([]any)
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: a rotated pack needs a modules list", ErrConfig)
	}
	var weights, inverse []string
	var widths []int32
	var signs []int32
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: modules[%d] is not an object", ErrConfig, i)
		}
		path, _ := m["path"].(string)
		b, _ := m["block"].(float64)
		emb, _ := m["embedding"].(bool)
		if b == 0 {
			continue // not rotated
		}
		if uint32(b) != block {
			return nil, fmt.Errorf("%w: module %s has Hadamard block %v, the pack %d (trit runs one block size)", ErrUnsupported, path, b, block)
		}
		g, ok := ggufName(path+".weight", fam)
		if !ok || s.byName[g] == nil {
			return nil, fmt.Errorf("%w: rotated module %s is not a tensor of the model", ErrConfig, path)
		}
		if emb {
			inverse = append(inverse, g)
		} else {
			weights = append(weights, g)
		}
		if mode != hadamard.SignExplicit {
			continue
		}
		st := s.set.Tensor(path + ".signs")
		if st == nil {
			return nil, fmt.Errorf("%w: rotated module %s has no .signs", ErrConfig, path)
		}
		width := s.byName[g].Dims[0]
		if len(st.Shape) != 1 || st.Shape[0] != width {
			return nil, fmt.Errorf("%w: %s.signs has shape %v, want [%d]", ErrConfig, path, st.Shape, width)
		}
		v, err := st.Floats()
		if err != nil {
			return nil, err
		}
		sv := make([]int32, len(v))
		for i, x := range v {
			if x != 1 && x != -1 {
				return nil, fmt.Errorf("%w: %s.signs[%d] = %g is not ±1", ErrConfig, path, i, x)
			}
			sv[i] = int32(x)
		}
		// Signs are keyed by width, shared by every module of that width.
		off := 0
		if k := slices.Index(widths, int32(width)); k >= 0 {
			for _, w := range widths[:k] {
				off += int(w)
			}
			if !slices.Equal(signs[off:off+int(width)], sv) {
				return nil, fmt.Errorf("%w: %s.signs differ from another module of width %d (trit, like llama.cpp, shares signs per width)", ErrUnsupported, path, width)
			}
			continue
		}
		widths = append(widths, int32(width))
		signs = append(signs, sv...)
	}
	kvs := []gguf.KV{
		{Key: hadamard.KeyPrefix + "version", Value: gguf.Uint32(version)},
		{Key: hadamard.KeyPrefix + "block_size", Value: gguf.Uint32(block)},
		{Key: hadamard.KeyPrefix + "transform", Value: gguf.String(str("transform"))},
		{Key: hadamard.KeyPrefix + "axis", Value: gguf.String(str("axis"))},
		{Key: hadamard.KeyPrefix + "sign_mode", Value: gguf.String(mode)},
	}
	if mode == hadamard.SignExplicit {
		kvs = append(kvs, gguf.KV{Key: hadamard.KeyPrefix + "sign_widths", Value: gguf.Array(widths)},
			gguf.KV{Key: hadamard.KeyPrefix + "sign_values", Value: gguf.Array(signs)})
	}
	kvs = append(kvs,
		gguf.KV{Key: hadamard.KeyPrefix + "weight_names", Value: gguf.Array(weights)},
		gguf.KV{Key: hadamard.KeyPrefix + "inverse_weight_names", Value: gguf.Array(inverse)},
		gguf.KV{Key: hadamard.KeyPrefix + "gdn_v_grouped", Value: gguf.Bool(grouped)})
	return kvs, nil
}
