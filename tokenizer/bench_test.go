package tokenizer

import (
	"bytes"
	"os"
	"testing"
	"trit/internal/testdata"
)

func BenchmarkFromHuggingFace(b *testing.B) {
	data, err := os.ReadFile(testdata.Path(b, "tokenizers/qwen3/tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := FromHuggingFace(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkEncode encodes the first 256 KiB of WikiText-2 with a fresh
// tokenizer each time, so the BPE cache starts cold (as in a server that
// tokenizes a long new prompt).
func BenchmarkEncodeQwen3(b *testing.B) {
	text, err := os.ReadFile(testdata.Path(b, "wikitext-2/wiki.test.raw"))
	if err != nil {
		b.Fatal(err)
	}
	text = text[:256<<10]
	tok := qwen3Tokenizer(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		clear(tok.cache)
		tok.Encode(string(text), EncodeOptions{})
	}
}

func BenchmarkEncodeQwen3Warm(b *testing.B) {
	text, err := os.ReadFile(testdata.Path(b, "wikitext-2/wiki.test.raw"))
	if err != nil {
		b.Fatal(err)
	}
	text = text[:256<<10]
	tok := qwen3Tokenizer(b)
	tok.Encode(string(text), EncodeOptions{})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(string(text), EncodeOptions{})
	}
}

func BenchmarkDecodeQwen3(b *testing.B) {
	text, err := os.ReadFile(testdata.Path(b, "wikitext-2/wiki.test.raw"))
	if err != nil {
		b.Fatal(err)
	}
	text = text[:256<<10]
	tok := qwen3Tokenizer(b)
	ids := tok.Encode(string(text), EncodeOptions{})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Decode(ids)
	}
}

func BenchmarkEncodeLlama2C(b *testing.B) {
	golden, err := os.ReadFile(testdata.Path(b, "llama2c/golden_t0_n200_noprompt.txt"))
	if err != nil {
		b.Fatal(err)
	}
	tok := loadTok512(b)
	b.SetBytes(int64(len(golden)))
	for b.Loop() {
		tok.Encode(string(golden), EncodeOptions{AddBOS: true})
	}
}
