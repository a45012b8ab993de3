package llama_test

import (
	"testing"

	"trit/internal/logitcmp"
	_ "trit/model/llama"
)

// TestReferenceLogits checks every qwen3 model of the reference set against
// the logits llama.cpp computed.
func TestReferenceLogits(t *testing.T) { logitcmp.CheckReference(t, "qwen3-*.gguf") }

// TestExactPathMatchesFloat: Q2_0 (group 64 and 128) is lossless for these
// ternary weights, so the exact path must reproduce the float model.
func TestExactPathMatchesFloat(t *testing.T) {
	logitcmp.CheckExact(t, "qwen3-tern-f32", "qwen3-tern-Q2_0", "qwen3-tern-Q2_0g128")
}

// TestKVCacheTypes checks every cache type against llama.cpp's logits with
// the same cache types (../shared/testdata/reference, "Quantized KV cache").
func TestKVCacheTypes(t *testing.T) { logitcmp.CheckKVCache(t, "qwen3-tern-f32") }

// TestKVCacheLongPrompt checks the quantized caches over a prompt of
// several pages, prefilled in one batch.
func TestKVCacheLongPrompt(t *testing.T) { logitcmp.CheckKVCacheLong(t, "qwen3-tern-f32", 700) }
