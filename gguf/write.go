package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"trit/internal/atomicfile"
	"trit/quant"
)

// A Writer assembles a GGUF file: metadata and tensors are added in the
// order they will appear, then WriteTo or WriteFile writes them out in the
// layout llama.cpp's writers use (header, metadata, tensor infos, padding,
// then each tensor padded to the alignment), so a file read and written
// again comes out byte for byte the same.
//
// Tensor data can be given as a slice or produced by a callback at write
// time, so a converter never needs a whole model in memory.
type Writer struct {
	kv      []KV
	keys    map[string]bool
	tensors []*wtensor
	names   map[string]bool
	align   int64
}

type wtensor struct {
	name   string
	format *quant.Format
	dims   []int64
	size   int64
	write  func(io.Writer) error
}

// NewWriter returns an empty Writer with the default alignment.
func NewWriter() *Writer {
	return &Writer{keys: map[string]bool{}, names: map[string]bool{}, align: DefaultAlignment}
}

// AddKV appends a metadata pair. Adding general.alignment (a UINT32 power
// of two) changes the alignment the Writer uses.
func (w *Writer) AddKV(key string, v Value) error {
	if w.keys[key] {
		return fmt.Errorf("%w: key %q", ErrDuplicate, key)
	}
	if err := checkValue(v, 1); err != nil {
		return fmt.Errorf("gguf: key %q: %w", key, err)
	}
	if key == KeyAlignment {
		a, _ := v.Uint()
		if v.Type() != TypeUint32 || a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("%w: %s must be a UINT32 power of two, not %s %v", ErrAlignment, key, v.Type(), v)
		}
		w.align = int64(a)
	}
	w.keys[key] = true
	w.kv = append(w.kv, KV{key, v})
	return nil
}

// checkValue checks that v, at nesting level level (a top-level array is
// level 1), can be written and read back.
func checkValue(v Value, level int) error {
	if !v.Valid() {
		return errors.New("invalid (zero) Value")
	}
	if vs, ok := v.arr.([]Value); ok {
		if level >= maxNesting {
			return ErrNesting
		}
		for _, e := range vs {
			if e.Type() != TypeArray {
				return fmt.Errorf("array of arrays holds a %s", e.Type())
			}
			if err := checkValue(e, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddTensor appends a tensor whose data are already in memory. The Writer
// keeps data, not a copy, until it has written the file.
func (w *Writer) AddTensor(name string, f *quant.Format, dims []int64, data []byte) error {
	t, err := w.tensor(name, f, dims)
	if err != nil {
		return err
	}
	if int64(len(data)) != t.size {
		return &TensorError{name, fmt.Errorf("%w: %d bytes given, %s %v takes %d", ErrDataSize, len(data), f.Name, dims, t.size)}
	}
	t.write = func(dst io.Writer) error {
		_, err := dst.Write(data)
		return err
	}
	w.add(t)
	return nil
}

// AddTensorFunc appends a tensor whose data write produces when the file is
// written; write must write exactly the tensor's size in bytes. It may be
// called more than once if the Writer writes more than once.
func (w *Writer) AddTensorFunc(name string, f *quant.Format, dims []int64, write func(io.Writer) error) error {
	t, err := w.tensor(name, f, dims)
	if err != nil {
		return err
	}
	t.write = write
	w.add(t)
	return nil
}

func (w *Writer) add(t *wtensor) {
	w.names[t.name] = true
	w.tensors = append(w.tensors, t)
}

// tensor validates a tensor description and computes its size.
func (w *Writer) tensor(name string, f *quant.Format, dims []int64) (*wtensor, error) {
	if w.names[name] {
		return nil, &TensorError{name, ErrDuplicate}
	}
	if f == nil || f.BlockElems <= 0 || f.BlockBytes <= 0 {
		return nil, &TensorError{name, fmt.Errorf("%w: no format", ErrUnknownType)}
	}
	if len(dims) == 0 || len(dims) > MaxDims {
		return nil, &TensorError{name, fmt.Errorf("%w: %d dimensions", ErrDims, len(dims))}
	}
	elems := int64(1)
	for i, d := range dims {
		if d <= 0 || d > math.MaxInt64/elems {
			return nil, &TensorError{name, fmt.Errorf("%w: dimension %d is %d", ErrDims, i, d)}
		}
		elems *= d
	}
	if dims[0]%int64(f.BlockElems) != 0 {
		return nil, &TensorError{name, fmt.Errorf("%w: ne[0] = %d, %s blocks hold %d", ErrBlockSize, dims[0], f.Name, f.BlockElems)}
	}
	blocks := elems / int64(f.BlockElems)
	if blocks > math.MaxInt64/int64(f.BlockBytes) {
		return nil, &TensorError{name, fmt.Errorf("%w: size overflows", ErrDims)}
	}
	return &wtensor{name: name, format: f, dims: append([]int64(nil), dims...), size: blocks * int64(f.BlockBytes)}, nil
}

// countWriter counts what passes through it.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// enc writes little-endian values; the first error sticks.
type enc struct {
	w   *bufio.Writer
	cw  *countWriter
	buf [8]byte
}

func (e *enc) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.w.Write(e.buf[:4])
}

func (e *enc) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.w.Write(e.buf[:8])
}

func (e *enc) str(s string) {
	e.u64(uint64(len(s)))
	e.w.WriteString(s)
}

func (e *enc) pos() int64 { return e.cw.n + int64(e.w.Buffered()) }

func (e *enc) pad(align int64) {
	var zero [64]byte
	n := (align - e.pos()%align) % align
	for n > 0 {
		k := min(n, int64(len(zero)))
		e.w.Write(zero[:k])
		n -= k
	}
}

// scalar writes the payload of a fixed-size value.
func (e *enc) scalar(t ValueType, bits uint64) {
	switch t.size() {
	case 1:
		e.w.WriteByte(byte(bits))
	case 2:
		binary.LittleEndian.PutUint16(e.buf[:], uint16(bits))
		e.w.Write(e.buf[:2])
	case 4:
		e.u32(uint32(bits))
	default:
		e.u64(bits)
	}
}

func (e *enc) value(v Value) {
	switch v.Type() {
	case TypeString:
		e.str(v.str)
		return
	case TypeArray:
		et, _ := v.ElemType()
		e.u32(uint32(et))
		n := v.Len()
		e.u64(uint64(n))
		switch a := v.arr.(type) {
		case []string:
			for _, s := range a {
				e.str(s)
			}
		case []Value:
			for _, x := range a {
				e.value(x)
			}
		default:
			for i := range n {
				x := v.Index(i)
				e.scalar(x.typ, x.bits)
			}
		}
		return
	}
	e.scalar(v.Type(), v.bits)
}

// WriteTo writes the file to dst and returns the number of bytes written.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	cw := &countWriter{w: dst}
	e := &enc{w: bufio.NewWriterSize(cw, 64<<10), cw: cw}
	e.w.WriteString(Magic)
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type()))
		e.value(kv.Value)
	}
	var off int64
	for _, t := range w.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.format.Type))
		e.u64(uint64(off))
		off += t.size
		off += (w.align - off%w.align) % w.align
	}
	e.pad(w.align)
	for _, t := range w.tensors {
		start := e.pos()
		if err := t.write(e.w); err != nil {
			e.w.Flush()
			return cw.n, &TensorError{t.name, err}
		}
		if got := e.pos() - start; got != t.size {
			e.w.Flush()
			return cw.n, &TensorError{t.name, fmt.Errorf("%w: wrote %d bytes, want %d", ErrDataSize, got, t.size)}
		}
		e.pad(w.align)
	}
	err := e.w.Flush()
	return cw.n, err
}

// WriteFile writes the file to path. It writes a temporary file in the
// same directory and renames it over path only when everything succeeded,
// so a failure never leaves a partial file behind.
func (w *Writer) WriteFile(path string) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		_, err := w.WriteTo(f)
		return err
	})
}
