// Package gguf reads and writes GGUF files, the container llama.cpp uses
// for model weights and metadata.
//
// A file is a header, an ordered list of key/value metadata pairs, an
// ordered list of tensor descriptions and an aligned data section holding
// the tensors back to back. Open maps a file into memory and parses only the
// header, so tensor data are zero-copy slices of the mapping; NewReader
// works over any io.ReaderAt and reads tensor data on demand.
//
// The reader is strict: every count and length is checked against the bytes
// that remain before anything is allocated, and the tensors must be laid
// out exactly as ggml's own reader demands (contiguous, in listed order,
// each padded to the alignment). Type id 42 has two incompatible layouts
// (Prism ML's group-128 Q2_0 and upstream's group-64 Q2_0); the reader
// tells them apart from that layout and records its decision in
// Tensor.Resolution.
package gguf

import (
	"errors"
	"fmt"
	"io"
	"math"

	"trit/internal/mmapfile"
	"trit/quant"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version the Writer produces.
const Version = 3

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that overrides DefaultAlignment.
const KeyAlignment = "general.alignment"

// MaxDims is the largest number of dimensions a tensor may have.
const MaxDims = 4

// maxNesting bounds arrays of arrays, so a hostile file cannot recurse
// without limit.
const maxNesting = 32

// Errors reported by the reader and the writer. Errors about one tensor are
// wrapped in a *TensorError; all of them can be tested with errors.Is.
var (
	ErrBadMagic    = errors.New("gguf: bad magic (not a GGUF file)")
	ErrVersion     = errors.New("gguf: unsupported version")
	ErrTruncated   = errors.New("gguf: file truncated")
	ErrAlignment   = errors.New("gguf: bad alignment")
	ErrValueType   = errors.New("gguf: unknown value type")
	ErrNesting     = errors.New("gguf: arrays nested too deeply")
	ErrDuplicate   = errors.New("gguf: duplicate name")
	ErrUnknownType = errors.New("gguf: unknown tensor type")
	ErrDims        = errors.New("gguf: bad tensor dimensions")
	ErrBlockSize   = errors.New("gguf: row length not a multiple of the block size")
	ErrLayout      = errors.New("gguf: tensor data not contiguous in listed order")
	ErrAmbiguous   = errors.New("gguf: type 42 layout cannot be determined")
	ErrDataSize    = errors.New("gguf: tensor data size does not match its type and shape")
	ErrClosed      = errors.New("gguf: file closed")
)

// A TensorError reports a problem with one tensor.
type TensorError struct {
	Name string // tensor name
	Err  error  // what is wrong; wraps one of the package's sentinel errors
}

// Error formats the tensor name and the problem.
func (e *TensorError) Error() string { return fmt.Sprintf("gguf: tensor %q: %v", e.Name, e.Err) }

// Unwrap returns e.Err.
func (e *TensorError) Unwrap() error { return e.Err }

// KV is one metadata pair.
type KV struct {
	Key   string
	Value Value
}

// File is a parsed GGUF file. Its fields describe the file and must not be
// modified.
type File struct {
	Version    uint32    // 2 or 3
	Alignment  int64     // data alignment in bytes
	DataOffset int64     // absolute offset of the data section
	Size       int64     // size of the file in bytes
	Tensors    []*Tensor // tensors, in file order
	Metadata             // the header's key/value pairs, in file order

	tensors map[string]*Tensor
	m       *mmapfile.File
}

// Tensor describes one tensor and gives access to its data.
type Tensor struct {
	Name   string
	Dims   []int64       // ne: Dims[0] is the contiguous (fastest) dimension
	Type   quant.Type    // the ggml type id as stored
	Format *quant.Format // the layout Type was resolved to
	Offset int64         // offset of the data, relative to File.DataOffset
	Size   int64         // bytes of data (without padding)
	// Resolution explains how an ambiguous type id (42) was resolved; it is
	// empty for ids with a single meaning.
	Resolution string

	file *File
}

// Elems returns the number of elements of t.
func (t *Tensor) Elems() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Data returns the bytes of t. For a file from Open it is a read-only slice
// of the memory mapping, valid until Close; writing to it faults. For a file
// from NewReader it is a fresh copy read from the io.ReaderAt.
func (t *Tensor) Data() ([]byte, error) {
	b, err := t.file.m.Slice(t.file.DataOffset+t.Offset, t.Size)
	if err != nil && err != ErrClosed {
		err = &TensorError{Name: t.Name, Err: err}
	}
	return b, err
}

// Section returns a reader over the bytes of t, for streaming large tensors
// without holding them in memory. Like the slices from Data it must not be
// used after Close.
func (t *Tensor) Section() *io.SectionReader {
	return t.file.m.Section(t.file.DataOffset+t.Offset, t.Size)
}

// Close releases the memory mapping or file behind f. Slices returned by
// Tensor.Data of a mapped file must not be used afterwards.
func (f *File) Close() error { return f.m.Close() }

// Tensor returns the tensor with the given name, or nil.
func (f *File) Tensor(name string) *Tensor { return f.tensors[name] }

// Metadata is an ordered list of key/value pairs with typed lookups by
// key. A File embeds its header's; model sources of other containers build
// one of GGUF keys.
type Metadata struct {
	KV []KV

	keys map[string]int
}

// NewMetadata indexes kvs (which it keeps); a key given twice is an error.
func NewMetadata(kvs []KV) (Metadata, error) {
	m := Metadata{KV: kvs, keys: make(map[string]int, len(kvs))}
	for i, kv := range kvs {
		if _, dup := m.keys[kv.Key]; dup {
			return Metadata{}, fmt.Errorf("%w: key %q", ErrDuplicate, kv.Key)
		}
		m.keys[kv.Key] = i
	}
	return m, nil
}

// Keys returns the keys in order.
func (f *Metadata) Keys() []string {
	keys := make([]string, len(f.KV))
	for i, kv := range f.KV {
		keys[i] = kv.Key
	}
	return keys
}

// Lookup returns the value stored under key.
func (f *Metadata) Lookup(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns the STRING stored under key.
func (f *Metadata) String(key string) (string, bool) {
	v, _ := f.Lookup(key)
	return v.Text()
}

// Uint returns the non-negative integer (of any integer type) under key.
func (f *Metadata) Uint(key string) (uint64, bool) {
	v, _ := f.Lookup(key)
	return v.Uint()
}

// Int returns the integer (of any integer type) under key.
func (f *Metadata) Int(key string) (int64, bool) {
	v, _ := f.Lookup(key)
	return v.Int()
}

// Float returns the number under key as a float64 (see Value.Float).
func (f *Metadata) Float(key string) (float64, bool) {
	v, _ := f.Lookup(key)
	return v.Float()
}

// Bool returns the BOOL under key.
func (f *Metadata) Bool(key string) (bool, bool) {
	v, _ := f.Lookup(key)
	return v.Bool()
}

// Strings returns the array of strings under key; the slice is shared
// with the Metadata and must not be modified.
func (f *Metadata) Strings(key string) ([]string, bool) {
	v, _ := f.Lookup(key)
	return v.Strings()
}

// Ints returns the array of integers (of any integer type) under key.
func (f *Metadata) Ints(key string) ([]int64, bool) {
	v, _ := f.Lookup(key)
	return v.Ints()
}

// Floats returns the array of numbers under key as float64s.
func (f *Metadata) Floats(key string) ([]float64, bool) {
	v, _ := f.Lookup(key)
	return v.Floats()
}

// pad rounds n up to a multiple of align (a power of two). It reports
// false when the result would overflow.
func pad(n, align int64) (int64, bool) {
	if n > math.MaxInt64-(align-1) {
		return 0, false
	}
	return (n + align - 1) &^ (align - 1), true
}
