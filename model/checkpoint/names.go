package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// The tensor name map between Hugging Face module paths (as HF checkpoints
// and MLX packs use them, after their prefix) and GGUF names, for the
// architectures trit runs. Per-layer entries omit "model.layers.N." and
// "blk.N.".
var (
	globalNames = map[string]string{
		"embed_tokens.weight": "token_embd.weight",
		"norm.weight":         "output_norm.weight",
		"lm_head.weight":      "output.weight",
	}
	layerNames = map[string]string{
		"input_layernorm.weight":            "attn_norm.weight",
		"self_attn.q_proj.weight":           "attn_q.weight",
		"self_attn.k_proj.weight":           "attn_k.weight",
		"self_attn.v_proj.weight":           "attn_v.weight",
		"self_attn.o_proj.weight":           "attn_output.weight",
		"self_attn.q_norm.weight":           "attn_q_norm.weight",
		"self_attn.k_norm.weight":           "attn_k_norm.weight",
		"mlp.gate_proj.weight":              "ffn_gate.weight",
		"mlp.up_proj.weight":                "ffn_up.weight",
		"mlp.down_proj.weight":              "ffn_down.weight",
		"linear_attn.in_proj_qkv.weight":    "attn_qkv.weight",
		"linear_attn.in_proj_z.weight":      "attn_gate.weight",
		"linear_attn.in_proj_b.weight":      "ssm_beta.weight",
		"linear_attn.in_proj_a.weight":      "ssm_alpha.weight",
		"linear_attn.out_proj.weight":       "ssm_out.weight",
		"linear_attn.conv1d.weight":         "ssm_conv1d.weight",
		"linear_attn.A_log":                 "ssm_a",
		"linear_attn.dt_bias":               "ssm_dt.bias",
		"linear_attn.norm.weight":           "ssm_norm.weight",
		"post_attention_layernorm.weight/3": "ffn_norm.weight",
		"post_attention_layernorm.weight/5": "post_attention_norm.weight",
	}
)

// prefixes a checkpoint may put before the module paths: multimodal HF
// checkpoints, mlx-lm's and mlx-vlm's wrappers, plain causal LMs.
var prefixes = []string{"model.language_model.", "language_model.model.", "language_model.", "model."}

// family is "3" (qwen3, llama: post-attention norm is ffn_norm) or "5"
// (qwen35: post_attention_norm).
func ggufName(hf, family string) (string, bool) {
	rest := hf
	for _, p := range prefixes {
		if r, ok := strings.CutPrefix(hf, p); ok {
			rest = r
			break
		}
	}
	if g, ok := globalNames[rest]; ok {
		return g, true
	}
	layers, ok := strings.CutPrefix(rest, "layers.")
	if !ok {
		return "", false
	}
	i := strings.IndexByte(layers, '.')
	if i <= 0 {
		return "", false
	}
	n, err := strconv.Atoi(layers[:i])
	if err != nil || n < 0 || layers[:i] != strconv.Itoa(n) {
		return "", false
	}
	suffix := layers[i+1:]
	g, ok := layerNames[suffix]
	if !ok {
		g, ok = layerNames[suffix+"/"+family]
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf("blk.%d.%s", n, g), true
}

// hfName is the inverse of ggufName, with prefix put before the path.
func hfName(gguf, family, prefix string) (string, bool) {
	for hf, g := range globalNames {
		if g == gguf {
			if hf == "lm_head.weight" {
				return strings.TrimSuffix(prefix, "model.") + hf, true
			}
			return prefix + hf, true
		}
	}
	rest, ok := strings.CutPrefix(gguf, "blk.")
	if !ok {
		return "", false
	}
	i := strings.IndexByte(rest, '.')
	if i <= 0 {
		return "", false
	}
	suffix := rest[i+1:]
	for hf, g := range layerNames {
		if g != suffix {
			continue
		}
		base, fam, found := strings.Cut(hf, "/")
		if found && fam != family {
			continue
		}
		return prefix + "layers." + rest[:i] + "." + base, true
	}
	return "", false
}

// HFName returns the Hugging Face / MLX module path of the GGUF tensor
// name in a checkpoint of arch, with the prefix mlx-lm writes (model. for
// qwen3 and llama, language_model.model. for qwen35).
func HFName(name, arch string) (string, bool) {
	prefix := "model."
	if arch == "qwen35" {
		prefix = "language_model.model."
	}
	return hfName(name, family(arch), prefix)
}
