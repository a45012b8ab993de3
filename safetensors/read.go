package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"trit/internal/mmapfile"
)

// NewReader parses the header of the safetensors data in r (size bytes)
// and validates it. Tensor data are read from r when asked for.
func NewReader(r io.ReaderAt, size int64) (*File, error) {
	f := &File{Size: size, m: mmapfile.NewReader(r, size)}
	f.m.Closed, f.m.Truncated = ErrClosed, ErrTruncated
	if err := f.parse(); err != nil {
		return nil, err
	}
	return f, nil
}

// entry is one tensor's header record.
type entry struct {
	DType       DType   `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

func (f *File) parse() error {
	var lenBuf [8]byte
	if f.Size < 8 {
		return fmt.Errorf("%w: %d bytes, need at least 8", ErrTruncated, f.Size)
	}
	if _, err := f.m.ReadAt(lenBuf[:], 0); err != nil {
		return fmt.Errorf("%w: header length: %v", ErrTruncated, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	switch {
	case n < 2:
		return fmt.Errorf("%w: %d bytes", ErrHeaderSize, n)
	case n > MaxHeaderSize:
		return fmt.Errorf("%w: %d bytes exceeds the limit of %d", ErrHeaderSize, n, MaxHeaderSize)
	case int64(n) > f.Size-8:
		return fmt.Errorf("%w: header of %d bytes in a file of %d", ErrTruncated, n, f.Size)
	}
	hdr := make([]byte, n)
	if m, err := f.m.ReadAt(hdr, 8); m != len(hdr) {
		return fmt.Errorf("%w: header: %v", ErrTruncated, err)
	}
	f.DataOffset = 8 + int64(n)
	return f.parseHeader(hdr)
}

// parseHeader decodes the JSON object token by token, so that duplicate
// names (which encoding/json would silently merge) are refused.
func (f *File) parseHeader(hdr []byte) error {
	if len(hdr) == 0 || hdr[0] != '{' {
		return fmt.Errorf("%w: does not start with '{'", ErrHeader)
	}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", ErrHeader, err)
	}
	f.tensors = map[string]*Tensor{}
	seenMeta := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrHeader, err)
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%w: key %v", ErrHeader, tok)
		}
		if name == MetadataKey {
			if seenMeta {
				return fmt.Errorf("%w: two %s entries", ErrHeader, MetadataKey)
			}
			seenMeta = true
			if err := decodeStrict(dec, &f.Metadata); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrHeader, MetadataKey, err)
			}
			continue
		}
		if _, dup := f.tensors[name]; dup {
			return &TensorError{Name: name, Err: ErrDuplicate}
		}
		var e entry
		if err := decodeStrict(dec, &e); err != nil {
			return &TensorError{Name: name, Err: fmt.Errorf("%w: %v", ErrHeader, err)}
		}
		t, err := f.tensor(name, &e)
		if err != nil {
			return &TensorError{Name: name, Err: err}
		}
		f.tensors[name] = t
		f.Tensors = append(f.Tensors, t)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", ErrHeader, err)
	}
	// Writers pad the header with spaces; anything else is garbage.
	rest := hdr[dec.InputOffset():]
	if len(bytes.TrimRight(rest, " \t\r\n")) != 0 {
		return fmt.Errorf("%w: %d bytes after the JSON object", ErrHeader, len(rest))
	}
	return f.layout()
}

// decodeStrict decodes the next JSON value into v, refusing unknown fields.
func decodeStrict(dec *json.Decoder, v any) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("null value")
	}
	return nil
}

// shapeBytes returns the data size of a tensor of dtype dt and shape.
func shapeBytes(dt DType, shape []int64) (int64, error) {
	es := dt.Size()
	if es == 0 {
		return 0, fmt.Errorf("%w %q", ErrDType, dt)
	}
	if shape == nil || len(shape) > MaxDims {
		return 0, fmt.Errorf("%w: %v (at most %d dimensions)", ErrShape, shape, MaxDims)
	}
	n := int64(es)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("%w: %v", ErrShape, shape)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("%w: %v overflows", ErrShape, shape)
		}
		n *= d
	}
	return n, nil
}

// tensor checks one header entry against the dtype table and the file size.
func (f *File) tensor(name string, e *entry) (*Tensor, error) {
	want, err := shapeBytes(e.DType, e.Shape)
	if err != nil {
		return nil, err
	}
	if len(e.DataOffsets) != 2 {
		return nil, fmt.Errorf("%w: %v is not [begin, end]", ErrOffsets, e.DataOffsets)
	}
	b, end := e.DataOffsets[0], e.DataOffsets[1]
	if b < 0 || end < b || end > f.Size-f.DataOffset {
		return nil, fmt.Errorf("%w: [%d, %d) outside the %d data bytes", ErrOffsets, b, end, f.Size-f.DataOffset)
	}
	if end-b != want {
		return nil, fmt.Errorf("%w: %s %v needs %d bytes, range holds %d", ErrDataSize, e.DType, e.Shape, want, end-b)
	}
	return &Tensor{Name: name, DType: e.DType, Shape: e.Shape, Begin: b, End: end, file: f}, nil
}

// layout sorts the tensors by offset and refuses overlapping ranges.
func (f *File) layout() error {
	sort.SliceStable(f.Tensors, func(i, j int) bool {
		a, b := f.Tensors[i], f.Tensors[j]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	var prev *Tensor
	for _, t := range f.Tensors {
		if t.Size() == 0 {
			continue
		}
		if prev != nil && t.Begin < prev.End {
			return &TensorError{Name: t.Name, Err: fmt.Errorf("%w: [%d, %d) overlaps %q [%d, %d)", ErrOverlap, t.Begin, t.End, prev.Name, prev.Begin, prev.End)}
		}
		prev = t
	}
	return nil
}
