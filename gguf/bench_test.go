package gguf

import (
	"bytes"
	"fmt"
	"testing"
)

// vocabFile returns a file holding a Qwen3.5-sized vocabulary: 248,320
// tokens, 247,587 merges and a token_type array.
func vocabFile(tb testing.TB) []byte {
	tb.Helper()
	tokens := make([]string, 248320)
	types := make([]int32, len(tokens))
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
		types[i] = 1
	}
	merges := make([]string, 247587)
	for i := range merges {
		merges[i] = fmt.Sprintf("a%d b%d", i, i)
	}
	w := NewWriter()
	w.AddKV("tokenizer.ggml.tokens", Array(tokens))
	w.AddKV("tokenizer.ggml.token_type", Array(types))
	w.AddKV("tokenizer.ggml.merges", Array(merges))
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// TestVocabAllocations checks that a string array costs a constant number
// of allocations, not one per string.
func TestVocabAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10 MB file")
	}
	data := vocabFile(t)
	var f *File
	allocs := testing.AllocsPerRun(2, func() {
		var err error
		if f, err = parseBytes(data); err != nil {
			t.Fatal(err)
		}
	})
	if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != 248320 || toks[12345] != "tok12345" {
		t.Fatalf("tokens: %d", len(toks))
	}
	if allocs > 200 {
		t.Errorf("%v allocations to parse 496k strings", allocs)
	}
}

func BenchmarkParseVocab(b *testing.B) {
	data := vocabFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseBytes(data); err != nil {
			b.Fatal(err)
		}
	}
}
