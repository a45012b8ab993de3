// Package convert turns model files of other runtimes into GGUF files that
// trit runs.
package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Llama2CConfig is the header of a llama2.c checkpoint.
type Llama2CConfig struct {
	Dim, Hidden, Layers, Heads, KVHeads, Vocab, SeqLen int
	// Shared is true when the classifier is the token embedding (the
	// checkpoint stores a positive vocab size).
	Shared bool
}

// Llama2C is a parsed llama2.c checkpoint: float32 weights in its order.
type Llama2C struct {
	Config                             Llama2CConfig
	Embed                              []float32 // [vocab, dim]
	AttnNorm, FFNNorm                  []float32 // [layers, dim]
	WQ, WK, WV, WO, W1, W2, W3, Output []float32 // Output is nil when shared
	FinalNorm                          []float32
}

// ErrLlama2C is wrapped by errors about a malformed llama2.c checkpoint.
var ErrLlama2C = errors.New("convert: bad llama2.c checkpoint")

// maxLlama2CDim bounds each header field so that a corrupt header cannot
// ask for an absurd allocation before the size check below.
const maxLlama2CDim = 1 << 20

// ReadLlama2C parses a llama2.c checkpoint of size bytes from r.
func ReadLlama2C(r io.ReaderAt, size int64) (*Llama2C, error) {
	var hdr [7]int32
	if err := binary.Read(io.NewSectionReader(r, 0, 28), binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrLlama2C, err)
	}
	c := Llama2CConfig{Dim: int(hdr[0]), Hidden: int(hdr[1]), Layers: int(hdr[2]), Heads: int(hdr[3]),
		KVHeads: int(hdr[4]), Vocab: int(hdr[5]), SeqLen: int(hdr[6])}
	c.Shared = c.Vocab > 0
	if c.Vocab < 0 {
		c.Vocab = -c.Vocab
	}
	for _, v := range []int{c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen} {
		if v <= 0 || v > maxLlama2CDim {
			return nil, fmt.Errorf("%w: header field %d out of range", ErrLlama2C, v)
		}
	}
	if c.Dim%c.Heads != 0 || c.Heads%c.KVHeads != 0 || (c.Dim/c.Heads)%2 != 0 {
		return nil, fmt.Errorf("%w: dim %d, %d heads, %d kv heads", ErrLlama2C, c.Dim, c.Heads, c.KVHeads)
	}
	hs := c.Dim / c.Heads
	kvDim := c.KVHeads * hs
	L := int64(c.Layers)
	sizes := []int64{
		int64(c.Vocab) * int64(c.Dim), L * int64(c.Dim), L * int64(c.Dim) * int64(c.Dim),
		L * int64(kvDim) * int64(c.Dim), L * int64(kvDim) * int64(c.Dim), L * int64(c.Dim) * int64(c.Dim),
		L * int64(c.Dim), L * int64(c.Hidden) * int64(c.Dim), L * int64(c.Dim) * int64(c.Hidden),
		L * int64(c.Hidden) * int64(c.Dim), int64(c.Dim),
		2 * int64(c.SeqLen) * int64(hs/2), // legacy RoPE tables, skipped
	}
	if !c.Shared {
		sizes = append(sizes, int64(c.Vocab)*int64(c.Dim))
	}
	var total int64 = 28
	for _, s := range sizes {
		total += 4 * s
	}
	if total != size {
		return nil, fmt.Errorf("%w: the header implies %d bytes, the file has %d", ErrLlama2C, total, size)
	}
	m := &Llama2C{Config: c}
	off := int64(28)
	next := func(n int64) ([]float32, error) {
		buf := make([]byte, 4*n)
		if _, err := r.ReadAt(buf, off); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLlama2C, err)
		}
		off += 4 * n
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		return out, nil
	}
	dst := []*[]float32{&m.Embed, &m.AttnNorm, &m.WQ, &m.WK, &m.WV, &m.WO, &m.FFNNorm, &m.W1, &m.W2, &m.W3, &m.FinalNorm}
	for i, p := range dst {
		v, err := next(sizes[i])
		if err != nil {
			return nil, err
		}
		*p = v
	}
	off += 4 * sizes[11]
	if !c.Shared {
		v, err := next(sizes[12])
		if err != nil {
			return nil, err
		}
		m.Output = v
	}
	return m, nil
}
