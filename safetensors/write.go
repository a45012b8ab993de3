package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"trit/internal/atomicfile"
)

// Writer assembles a safetensors file: tensors are laid out back to back
// in the order they are added, the header lists them in that order after
// the metadata, and is padded with spaces to a multiple of 8 bytes so that
// the data section starts aligned.
type Writer struct {
	meta    map[string]string
	tensors []*wtensor
	names   map[string]bool
	size    int64
}

type wtensor struct {
	name  string
	dtype DType
	shape []int64
	begin int64
	size  int64
	write func(io.Writer) error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer { return &Writer{names: map[string]bool{}} }

// SetMetadata sets a __metadata__ entry.
func (w *Writer) SetMetadata(key, value string) {
	if w.meta == nil {
		w.meta = map[string]string{}
	}
	w.meta[key] = value
}

// Add adds a tensor whose data is held in memory.
func (w *Writer) Add(name string, dt DType, shape []int64, data []byte) error {
	return w.AddFunc(name, dt, shape, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
}

// AddFunc adds a tensor whose data write produces when the file is written
// (exactly dtype size × shape bytes), so large tensors can be streamed.
func (w *Writer) AddFunc(name string, dt DType, shape []int64, write func(io.Writer) error) error {
	if name == "" || name == MetadataKey {
		return fmt.Errorf("%w: name %q", ErrHeader, name)
	}
	if w.names[name] {
		return &TensorError{Name: name, Err: ErrDuplicate}
	}
	checked, err := shapeBytes(dt, shape)
	if err != nil {
		return &TensorError{Name: name, Err: err}
	}
	w.names[name] = true
	w.tensors = append(w.tensors, &wtensor{name: name, dtype: dt, shape: append([]int64{}, shape...), begin: w.size, size: checked, write: write})
	w.size += checked
	return nil
}

// header builds the JSON header, padded to a multiple of 8.
func (w *Writer) header() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string, v any) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, err := json.Marshal(k)
		if err != nil {
			return err
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return nil
	}
	if w.meta != nil {
		if err := put(MetadataKey, w.meta); err != nil {
			return nil, err
		}
	}
	for _, t := range w.tensors {
		if err := put(t.name, entry{DType: t.dtype, Shape: t.shape, DataOffsets: []int64{t.begin, t.begin + t.size}}); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// WriteTo writes the file to dst.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	hdr, err := w.header()
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: dst}
	bw := bufio.NewWriterSize(cw, 1<<20)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
	bw.Write(lenBuf[:])
	bw.Write(hdr)
	for _, t := range w.tensors {
		start := cw.n + int64(bw.Buffered())
		if err := t.write(bw); err != nil {
			bw.Flush()
			return cw.n, &TensorError{Name: t.name, Err: err}
		}
		if got := cw.n + int64(bw.Buffered()) - start; got != t.size {
			bw.Flush()
			return cw.n, &TensorError{Name: t.name, Err: fmt.Errorf("%w: wrote %d bytes, want %d", ErrDataSize, got, t.size)}
		}
	}
	err = bw.Flush()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteFile writes the file to path through a temporary file in the same
// directory, renamed over path only when everything succeeded.
func (w *Writer) WriteFile(path string) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		_, err := w.WriteTo(f)
		return err
	})
}
