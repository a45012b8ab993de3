package model

import (
	"fmt"

	"trit/gguf"
	"trit/quant"
)

// Source is where a model's tensors and hyperparameters come from: a GGUF
// file, an MLX pack, a Hugging Face checkpoint. Names and keys are GGUF's
// (llama.cpp's naming, `<arch>.*` hyperparameters, `tokenizer.ggml.*`): a
// source of another container maps its own onto them, so an architecture
// is written once for all of them.
type Source interface {
	// Meta holds the hyperparameters and tokenizer keys.
	Meta() *gguf.Metadata
	// Tensor returns the named tensor, or nil.
	Tensor(name string) *Tensor
	// Tensors lists every tensor, in storage order.
	Tensors() []*Tensor
	// Layout reports how the source orders what GGUF fixes by convention.
	Layout() Layout
	// Close releases the source's files.
	Close() error
}

// Layout describes orderings in which sources differ.
type Layout struct {
	// GroupedVHeads is set when the Gated DeltaNet tensors index value
	// heads in Hugging Face's grouped order (value head j reads key head
	// j/r), as HF checkpoints and MLX packs do, rather than GGUF's tiled
	// order (key head j mod Hk).
	GroupedVHeads bool
	// Container names the source's format for Info.Notes.
	Container string
}

// Tensor is a tensor as a Source presents it: its GGUF name and dimension
// order (Dims[0] is the contiguous one), a format the kernels know, and
// its bytes in that format.
type Tensor struct {
	Name   string
	Dims   []int64
	Format *quant.Format
	Size   int64 // bytes of data
	// Note says how the source read the tensor where that is worth
	// reporting (type-42 layout, an MLX repack); empty otherwise.
	Note string

	data func() ([]byte, error)
}

// NewTensor describes a tensor whose bytes data returns (a slice of a
// mapping, or a buffer built on first use).
func NewTensor(name string, dims []int64, f *quant.Format, size int64, data func() ([]byte, error)) *Tensor {
	return &Tensor{Name: name, Dims: dims, Format: f, Size: size, data: data}
}

// Data returns the tensor's bytes in Format.
func (t *Tensor) Data() ([]byte, error) {
	b, err := t.data()
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", t.Name, err)
	}
	if int64(len(b)) != t.Size {
		return nil, fmt.Errorf("model: %s: %d bytes, want %d", t.Name, len(b), t.Size)
	}
	return b, nil
}

// Elems returns the number of elements.
func (t *Tensor) Elems() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Floats decodes the tensor to float32 in storage order.
func (t *Tensor) Floats() ([]float32, error) {
	data, err := t.Data()
	if err != nil {
		return nil, err
	}
	out := make([]float32, t.Elems())
	if err := t.Format.Decode(out, data); err != nil {
		return nil, fmt.Errorf("model: %s: %w", t.Name, err)
	}
	return out, nil
}

// ggufSource is a GGUF file as a Source.
type ggufSource struct {
	f       *gguf.File
	tensors []*Tensor
	byName  map[string]*Tensor
}

// FromGGUF makes a Source of an open GGUF file, which it then owns.
func FromGGUF(f *gguf.File) Source {
	s := &ggufSource{f: f, byName: make(map[string]*Tensor, len(f.Tensors))}
	for _, t := range f.Tensors {
		st := NewTensor(t.Name, t.Dims, t.Format, t.Size, t.Data)
		st.Note = t.Resolution
		s.tensors = append(s.tensors, st)
		s.byName[t.Name] = st
	}
	return s
}

func (s *ggufSource) Meta() *gguf.Metadata       { return &s.f.Metadata }
func (s *ggufSource) Tensor(name string) *Tensor { return s.byName[name] }
func (s *ggufSource) Tensors() []*Tensor         { return s.tensors }
func (s *ggufSource) Layout() Layout             { return Layout{Container: "GGUF"} }
func (s *ggufSource) Close() error               { return s.f.Close() }
