package tokenizer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteHuggingFace reads the real Qwen3 tokenizer.json, writes it back
// and checks that the copy reads as the same vocabulary.
func TestWriteHuggingFace(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "testdata", "tokenizers", "qwen3", "tokenizer.json")
	fd, err := os.Open(path)
	if err != nil {
		t.Skipf("shared test data absent: %v", err)
	}
	defer fd.Close()
	want, err := LoadHuggingFace(fd)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHuggingFace(&b, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHuggingFace(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tokens, want.Tokens) || !slices.Equal(got.Types, want.Types) || !slices.Equal(got.Merges, want.Merges) ||
		got.Pre != want.Pre || got.NFC != want.NFC {
		t.Errorf("round trip changed the vocabulary: %d/%d tokens, %d/%d merges, pre %s/%s, NFC %v/%v",
			len(got.Tokens), len(want.Tokens), len(got.Merges), len(want.Merges), got.Pre, want.Pre, got.NFC, want.NFC)
	}
	if err := WriteHuggingFace(&b, &Vocab{Model: ModelLlama}); err == nil {
		t.Error("wrote a llama vocabulary")
	}
}
