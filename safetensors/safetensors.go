// Package safetensors reads and writes safetensors files, the container
// Hugging Face and MLX use for model weights.
//
// A file is an 8-byte little-endian header length n, n bytes of JSON
// naming every tensor's dtype, shape and [begin, end) byte range within the
// data section that follows, then the data. Open maps a file into memory
// and validates the header, so tensor data are zero-copy slices of the
// mapping; NewReader works over any io.ReaderAt.
//
// The reader is strict: the header size is bounded before it is read,
// every tensor's byte range must lie inside the file, no two may overlap,
// and each must hold exactly dtype size × shape bytes.
package safetensors

import (
	"errors"
	"fmt"
	"io"
	"math"

	"trit/half"
	"trit/internal/mmapfile"
)

// MaxHeaderSize bounds the JSON header (as the reference implementation
// does), so a hostile length cannot request a huge allocation.
const MaxHeaderSize = 100 << 20

// MaxDims is the largest number of dimensions a tensor may have.
const MaxDims = 8

// MetadataKey is the header entry holding free-form string metadata.
const MetadataKey = "__metadata__"

// Errors reported by the reader and the writer; test with errors.Is.
var (
	ErrTruncated  = errors.New("safetensors: file truncated")
	ErrHeaderSize = errors.New("safetensors: bad header size")
	ErrHeader     = errors.New("safetensors: malformed header")
	ErrDType      = errors.New("safetensors: unknown dtype")
	ErrShape      = errors.New("safetensors: bad shape")
	ErrOffsets    = errors.New("safetensors: bad data offsets")
	ErrOverlap    = errors.New("safetensors: tensors overlap")
	ErrDataSize   = errors.New("safetensors: data size does not match dtype and shape")
	ErrDuplicate  = errors.New("safetensors: duplicate tensor name")
	ErrClosed     = errors.New("safetensors: file closed")
	ErrNotFloat   = errors.New("safetensors: dtype is not a float type")
)

// A TensorError reports a problem with one tensor.
type TensorError struct {
	Name string
	Err  error // wraps one of the package's sentinel errors
}

func (e *TensorError) Error() string { return fmt.Sprintf("safetensors: tensor %q: %v", e.Name, e.Err) }

func (e *TensorError) Unwrap() error { return e.Err }

// DType is a safetensors element type name, as written in the header.
type DType string

// The element types of the format.
const (
	Bool   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	F8E4M3 DType = "F8_E4M3"
	F8E5M2 DType = "F8_E5M2"
	I16    DType = "I16"
	U16    DType = "U16"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I32    DType = "I32"
	U32    DType = "U32"
	F32    DType = "F32"
	F64    DType = "F64"
	I64    DType = "I64"
	U64    DType = "U64"
)

var dtypeSizes = map[DType]int{
	Bool: 1, U8: 1, I8: 1, F8E4M3: 1, F8E5M2: 1,
	I16: 2, U16: 2, F16: 2, BF16: 2,
	I32: 4, U32: 4, F32: 4,
	F64: 8, I64: 8, U64: 8,
}

// Size returns the bytes per element of d, or 0 for an unknown dtype.
func (d DType) Size() int { return dtypeSizes[d] }

// Float reports whether Tensor.Floats can decode d.
func (d DType) Float() bool { return d == F16 || d == BF16 || d == F32 || d == F64 }

// Tensor describes one tensor and gives access to its data.
type Tensor struct {
	Name  string
	DType DType
	Shape []int64 // row-major: Shape[len-1] is the contiguous dimension
	// Begin and End are the byte range of the data, relative to the start
	// of the data section (as in the header).
	Begin, End int64

	file *File
}

// Size returns the number of data bytes.
func (t *Tensor) Size() int64 { return t.End - t.Begin }

// Elems returns the number of elements.
func (t *Tensor) Elems() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Data returns the bytes of t: for a file from Open a read-only slice of
// the mapping, valid until Close; for a file from NewReader a fresh copy.
func (t *Tensor) Data() ([]byte, error) {
	b, err := t.file.m.Slice(t.file.DataOffset+t.Begin, t.Size())
	if err != nil && err != ErrClosed {
		err = &TensorError{Name: t.Name, Err: err}
	}
	return b, err
}

// Section returns a reader over the bytes of t, for streaming.
func (t *Tensor) Section() *io.SectionReader {
	return t.file.m.Section(t.file.DataOffset+t.Begin, t.Size())
}

// Floats decodes a float tensor (F16, BF16, F32, F64) to float32.
func (t *Tensor) Floats() ([]float32, error) {
	if !t.DType.Float() {
		return nil, &TensorError{Name: t.Name, Err: fmt.Errorf("%w: %s", ErrNotFloat, t.DType)}
	}
	data, err := t.Data()
	if err != nil {
		return nil, err
	}
	out := make([]float32, t.Elems())
	DecodeFloats(out, t.DType, data)
	return out, nil
}

// DecodeFloats decodes len(dst) little-endian elements of the float dtype
// d from src into dst. It panics if d is not a float type or src is short.
func DecodeFloats(dst []float32, d DType, src []byte) {
	switch d {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = half.ToFloat32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
	case BF16:
		for i := range dst {
			dst[i] = half.BF16ToFloat32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(uint64(le32(src[8*i:])) | uint64(le32(src[8*i+4:]))<<32))
		}
	default:
		panic("safetensors: DecodeFloats of " + string(d))
	}
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// File is a parsed safetensors file. Its fields must not be modified.
type File struct {
	Size       int64             // bytes in the file
	DataOffset int64             // absolute offset of the data section (8 + header length)
	Metadata   map[string]string // the __metadata__ entry; nil when absent
	Tensors    []*Tensor         // in data order

	tensors map[string]*Tensor
	m       *mmapfile.File
}

// Tensor returns the tensor with the given name, or nil.
func (f *File) Tensor(name string) *Tensor { return f.tensors[name] }

// Close releases the mapping or file behind f.
func (f *File) Close() error { return f.m.Close() }
