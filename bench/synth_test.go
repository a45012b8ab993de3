package bench

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"trit/gguf"
	"trit/half"
	"trit/quant"
)

// Every generated block decodes to codes in {-d, 0, +d} (Q1_0: {-d, +d})
// with the requested scale, uses every code, and re-encodes to the same
// bytes: the blocks are exactly what the reference quantizer would write.
func TestLayoutsValid(t *testing.T) {
	const d = 0.03125
	for f, l := range layouts {
		t.Run(f.Name, func(t *testing.T) {
			const blocks = 64
			buf := make([]byte, blocks*f.BlockBytes)
			l.fill(buf, f.BlockBytes, half.FromFloat32(d), rand.New(rand.NewPCG(1, 2)))
			vals := make([]float32, blocks*f.BlockElems)
			if err := f.Decode(vals, buf); err != nil {
				t.Fatal(err)
			}
			seen := map[float32]int{}
			for _, v := range vals {
				seen[v]++
			}
			want := []float32{-d, 0, d}
			if f == quant.Q1_0 {
				want = []float32{-d, d}
			}
			if len(seen) != len(want) {
				t.Fatalf("decoded values %v, want exactly %v", seen, want)
			}
			for _, w := range want {
				// Near-uniform codes: each within ±20% of its share.
				share := float64(seen[w]) / float64(len(vals)) * float64(len(want))
				if share < 0.8 || share > 1.2 {
					t.Errorf("value %v has share %.2f of uniform", w, share)
				}
			}
			again := make([]byte, len(buf))
			if err := f.Encode(again, vals); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, buf) {
				t.Errorf("re-encoding changes the blocks")
			}
		})
	}
}

// The shapes match the published sizes: parameter counts near the model
// names and the file sizes of docs/peers.md for Bonsai-1.7B.
func TestShapes(t *testing.T) {
	tests := []struct {
		name     string
		min, max float64 // billions of parameters
	}{
		{"bonsai-1.7b", 1.70, 1.75},
		{"bonsai-4b", 4.0, 4.1},
		{"bonsai-8b", 8.1, 8.3},
		{"bonsai2-9b", 8.9, 9.5},
		{"bonsai-27b", 26.5, 27.5},
	}
	for _, tt := range tests {
		s := ShapeByName(tt.name)
		if s == nil {
			t.Fatalf("no shape %s", tt.name)
		}
		p := float64(s.Params()) / 1e9
		if p < tt.min || p > tt.max {
			t.Errorf("%s: %.3f B parameters, want %.2f..%.2f", tt.name, p, tt.min, tt.max)
		}
		for _, f := range []*quant.Format{quant.Q2_0, quant.TQ2_0, quant.TQ1_0, quant.PTQ1_0, quant.PQ2_0, quant.Q1_0} {
			if err := check(s, Types{Weight: f}); err != nil {
				t.Errorf("%s %s: %v", tt.name, f.Name, err)
			}
		}
	}
	// docs/peers.md: the all-tensor TQ2_0 file of this shape is 423.5 MiB.
	size, err := Size(ShapeByName("bonsai-1.7b"), Types{Weight: quant.TQ2_0})
	if err != nil {
		t.Fatal(err)
	}
	if mib := float64(size) / (1 << 20); mib < 423 || mib > 424 {
		t.Errorf("bonsai-1.7b TQ2_0: %.1f MiB, want 423.5", mib)
	}
	// 27B: 16 attention layers × K and V × 4 heads × 256 × 4096 positions.
	if got := ShapeByName("bonsai-27b").KVBytes(4096, 2); got != 256<<20 {
		t.Errorf("bonsai-27b f16 KV at 4096: %d bytes, want 256 MiB", got)
	}
	if got := ShapeByName("bonsai-1.7b").KVBytes(1, 4); got != 28*2*1024*4 {
		t.Errorf("bonsai-1.7b f32 KV per position: %d bytes", got)
	}
	if ShapeByName("BONSAI-27B") == nil || ShapeByName("bonsai-3b") != nil {
		t.Error("ShapeByName: wrong lookup")
	}
}

// The qwen35 layer pattern: full attention at i%4 == 3, with the tensor
// set of docs/qwen35-architecture.md §9.3.
func TestQwen35Tensors(t *testing.T) {
	s := ShapeByName("bonsai-27b")
	dims := map[string][]int64{}
	for _, ts := range s.Tensors() {
		dims[ts.Name] = ts.Dims
	}
	want := map[string][]int64{
		"token_embd.weight":        {5120, 248320},
		"output.weight":            {5120, 248320},
		"blk.0.attn_qkv.weight":    {5120, 10240},
		"blk.0.attn_gate.weight":   {5120, 6144},
		"blk.0.ssm_beta.weight":    {5120, 48},
		"blk.0.ssm_conv1d.weight":  {4, 10240},
		"blk.0.ssm_out.weight":     {6144, 5120},
		"blk.0.ssm_norm.weight":    {128},
		"blk.3.attn_q.weight":      {5120, 12288},
		"blk.3.attn_k.weight":      {5120, 1024},
		"blk.3.attn_output.weight": {6144, 5120},
		"blk.63.ffn_down.weight":   {17408, 5120},
	}
	for name, w := range want {
		if got := dims[name]; !slicesEqual(got, w) {
			t.Errorf("%s: dims %v, want %v", name, got, w)
		}
	}
	for _, absent := range []string{"blk.3.attn_qkv.weight", "blk.0.attn_q.weight", "blk.64.ffn_up.weight"} {
		if dims[absent] != nil {
			t.Errorf("%s should not exist", absent)
		}
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A synthetic file reads back with the shape's tensors in the chosen
// formats, the same seed gives the same bytes and another seed others.
func TestWriteSynthetic(t *testing.T) {
	s := ShapeByName("tiny")
	types := Types{Weight: quant.TQ2_0, Embd: quant.Q4_K}
	var a, b, c bytes.Buffer
	if _, err := WriteSynthetic(&a, s, types, 1); err != nil {
		t.Fatal(err)
	}
	WriteSynthetic(&b, s, types, 1)
	WriteSynthetic(&c, s, types, 2)
	if sha256.Sum256(a.Bytes()) != sha256.Sum256(b.Bytes()) {
		t.Error("same seed, different bytes")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("different seeds, same bytes")
	}
	f, err := gguf.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	specs := s.Tensors()
	if len(f.Tensors) != len(specs) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(specs))
	}
	for _, ts := range specs {
		got := f.Tensor(ts.Name)
		if got == nil {
			t.Fatalf("missing %s", ts.Name)
		}
		if got.Format != types.For(ts.Role) || !slicesEqual(got.Dims, ts.Dims) {
			t.Errorf("%s: %s %v, want %s %v", ts.Name, got.Format.Name, got.Dims, types.For(ts.Role).Name, ts.Dims)
		}
	}
	if n, _ := f.String("general.architecture"); n != "qwen3" {
		t.Errorf("architecture %q", n)
	}
	if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != s.Vocab {
		t.Errorf("tokenizer has %d tokens, want %d", len(toks), s.Vocab)
	}
}

func TestWriteSyntheticErrors(t *testing.T) {
	tiny := ShapeByName("tiny")
	odd := *tiny
	odd.FFN = 384 // not a multiple of TQ2_0's 256-element blocks
	tests := []struct {
		name  string
		shape *Shape
		types Types
		err   error
	}{
		{"float weights", tiny, Types{Weight: quant.Q8_0}, ErrNotTernary},
		{"no weights", tiny, Types{}, ErrNotTernary},
		{"blocks", &odd, Types{Weight: quant.TQ2_0}, ErrBadShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := WriteSyntheticFile(path, tt.shape, tt.types, 1); !errors.Is(err, tt.err) {
				t.Errorf("got %v, want %v", err, tt.err)
			}
		})
	}
}

func TestTypesString(t *testing.T) {
	tests := []struct {
		t    Types
		want string
	}{
		{Types{Weight: quant.Q2_0}, "Q2_0"},
		{Types{Weight: quant.TQ2_0, Embd: quant.Q4_K, Head: quant.Q6_K}, "TQ2_0 (embd Q4_K, head Q6_K)"},
		{Types{Weight: quant.TQ1_0, Head: quant.Q6_K}, "TQ1_0 (head Q6_K)"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.t, got, tt.want)
		}
	}
}

// BenchmarkFill measures the synthetic weight generator: MB/s of packed
// blocks per format.
func BenchmarkFill(b *testing.B) {
	for f, l := range layouts {
		b.Run(f.Name, func(b *testing.B) {
			buf := make([]byte, (chunkBytes/f.BlockBytes)*f.BlockBytes)
			rng := rand.New(rand.NewPCG(1, 2))
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				l.fill(buf, f.BlockBytes, 0x3c00, rng)
			}
		})
	}
}

// BenchmarkWriteSynthetic measures writing a whole real-shape file (to
// io.Discard): the cost of `trit bench --shape` before it measures.
func BenchmarkWriteSynthetic(b *testing.B) {
	s := ShapeByName("bonsai-1.7b")
	t := Types{Weight: quant.TQ2_0}
	size, err := Size(s, t)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := WriteSynthetic(io.Discard, s, t, 1); err != nil {
			b.Fatal(err)
		}
	}
}
