package gguf

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"trit/internal/mmapfile"
	"trit/quant"
)

// NewReader parses the GGUF file held by r, which must be size bytes long.
// Only the header is read; tensor data are read when Tensor.Data or
// Tensor.Section is called, so r must stay usable while the File is.
func NewReader(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative size %d", size)
	}
	f := &File{Size: size, m: mmapfile.NewReader(r, size)}
	f.m.Closed, f.m.Truncated = ErrClosed, ErrTruncated
	if err := f.parse(); err != nil {
		return nil, err
	}
	return f, nil
}

// decoder reads little-endian values, counting how many bytes remain so
// that every length can be checked before it is trusted. It reads through
// its own buffer, or straight from mem when the whole file is in memory.
type decoder struct {
	r     io.ReaderAt
	mem   []byte // the whole file, when mapped
	size  int64
	pos   int64  // offset of the next byte to decode
	buf   []byte // bytes of the file from offset start
	start int64
}

// chunk is how much the decoder reads from an io.ReaderAt at a time.
const chunk = 64 << 10

func (d *decoder) remaining() int64 { return d.size - d.pos }

// need fails with ErrTruncated unless n more bytes exist.
func (d *decoder) need(n int64) error {
	if n < 0 || n > d.remaining() {
		return fmt.Errorf("%w: need %d bytes at offset %d, %d left", ErrTruncated, n, d.pos, d.remaining())
	}
	return nil
}

// take consumes the next n bytes and returns them; the slice is valid
// until the next call.
func (d *decoder) take(n int) ([]byte, error) {
	if err := d.need(int64(n)); err != nil {
		return nil, err
	}
	if d.mem != nil {
		p := d.mem[d.pos : d.pos+int64(n)]
		d.pos += int64(n)
		return p, nil
	}
	off := d.pos - d.start
	if off+int64(n) > int64(len(d.buf)) {
		// Refill from pos. n fits in what remains, so the buffer never
		// grows past the file.
		want := min(max(int64(n), chunk), d.remaining())
		if int64(cap(d.buf)) < want {
			d.buf = make([]byte, want)
		}
		d.buf = d.buf[:want]
		got, err := d.r.ReadAt(d.buf, d.pos)
		if got < n {
			if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
				err = fmt.Errorf("%w: read failed at offset %d", ErrTruncated, d.pos)
			}
			d.buf = d.buf[:0]
			return nil, err
		}
		d.buf, d.start, off = d.buf[:got], d.pos, 0
	}
	d.pos += int64(n)
	return d.buf[off : off+int64(n)], nil
}

func (d *decoder) u8() (uint8, error) {
	p, err := d.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (d *decoder) u16() (uint16, error) {
	p, err := d.take(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(p), nil
}

func (d *decoder) u32() (uint32, error) {
	p, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (d *decoder) u64() (uint64, error) {
	p, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

// count reads a uint64 count of items of at least min bytes each and
// checks that they can fit in what remains.
func (d *decoder) count(min int64, what string) (int, error) {
	n, err := d.u64()
	if err != nil {
		return 0, err
	}
	if min < 1 {
		min = 1
	}
	if n > uint64(d.remaining()/min) {
		return 0, fmt.Errorf("%w: %s count %d at offset %d exceeds the %d bytes left", ErrTruncated, what, n, d.pos-8, d.remaining())
	}
	return int(n), nil
}

// strBytes reads a string and returns its bytes, valid until the next read.
func (d *decoder) strBytes() ([]byte, error) {
	n, err := d.count(1, "string length")
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

func (d *decoder) str() (string, error) {
	p, err := d.strBytes()
	return string(p), err
}

func (d *decoder) valueType() (ValueType, error) {
	t, err := d.u32()
	if err != nil {
		return 0, err
	}
	if !ValueType(t).valid() {
		return 0, fmt.Errorf("%w %d at offset %d", ErrValueType, t, d.pos-4)
	}
	return ValueType(t), nil
}

func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch t {
	case TypeString:
		s, err := d.str()
		return String(s), err
	case TypeArray:
		return d.array(depth + 1)
	}
	var bits uint64
	switch t.size() {
	case 1:
		x, err := d.u8()
		if err != nil {
			return Value{}, err
		}
		bits = uint64(x)
		if t == TypeInt8 {
			bits = uint64(int64(int8(x)))
		}
	case 2:
		x, err := d.u16()
		if err != nil {
			return Value{}, err
		}
		bits = uint64(x)
		if t == TypeInt16 {
			bits = uint64(int64(int16(x)))
		}
	case 4:
		x, err := d.u32()
		if err != nil {
			return Value{}, err
		}
		bits = uint64(x)
		if t == TypeInt32 {
			bits = uint64(int64(int32(x)))
		}
	default:
		x, err := d.u64()
		if err != nil {
			return Value{}, err
		}
		bits = x
	}
	if t == TypeBool && bits != 0 {
		bits = 1
	}
	return scalar(t, bits), nil
}

// fixed reads n elements of size bytes each (already checked to fit) and
// stores element i with put.
func (d *decoder) fixed(n, size int, put func(i int, b []byte)) error {
	per := chunk / size
	for i := 0; i < n; i += per {
		k := min(per, n-i)
		p, err := d.take(k * size)
		if err != nil {
			return err
		}
		for j := range k {
			put(i+j, p[j*size:])
		}
	}
	return nil
}

// array reads an array at nesting level depth (a top-level array is 1).
func (d *decoder) array(depth int) (Value, error) {
	if depth > maxNesting {
		return Value{}, fmt.Errorf("%w at offset %d", ErrNesting, d.pos)
	}
	et, err := d.valueType()
	if err != nil {
		return Value{}, err
	}
	n, err := d.count(et.minSize(), "array")
	if err != nil {
		return Value{}, err
	}
	le := binary.LittleEndian
	switch et {
	case TypeString:
		// All strings share one backing buffer: a 150k-entry vocabulary
		// costs one allocation for the text and one for the headers.
		var b strings.Builder
		ends := make([]int, n)
		for i := range n {
			p, err := d.strBytes()
			if err != nil {
				return Value{}, err
			}
			b.Write(p)
			ends[i] = b.Len()
		}
		all := b.String()
		s := make([]string, n)
		start := 0
		for i, e := range ends {
			s[i] = all[start:e]
			start = e
		}
		return Array(s), nil
	case TypeArray:
		s := make([]Value, n)
		for i := range s {
			if s[i], err = d.array(depth + 1); err != nil {
				return Value{}, err
			}
		}
		return Array(s), nil
	case TypeUint8:
		s := make([]uint8, n)
		return Array(s), d.fixed(n, 1, func(i int, b []byte) { s[i] = b[0] })
	case TypeInt8:
		s := make([]int8, n)
		return Array(s), d.fixed(n, 1, func(i int, b []byte) { s[i] = int8(b[0]) })
	case TypeBool:
		s := make([]bool, n)
		return Array(s), d.fixed(n, 1, func(i int, b []byte) { s[i] = b[0] != 0 })
	case TypeUint16:
		s := make([]uint16, n)
		return Array(s), d.fixed(n, 2, func(i int, b []byte) { s[i] = le.Uint16(b) })
	case TypeInt16:
		s := make([]int16, n)
		return Array(s), d.fixed(n, 2, func(i int, b []byte) { s[i] = int16(le.Uint16(b)) })
	case TypeUint32:
		s := make([]uint32, n)
		return Array(s), d.fixed(n, 4, func(i int, b []byte) { s[i] = le.Uint32(b) })
	case TypeInt32:
		s := make([]int32, n)
		return Array(s), d.fixed(n, 4, func(i int, b []byte) { s[i] = int32(le.Uint32(b)) })
	case TypeFloat32:
		s := make([]float32, n)
		return Array(s), d.fixed(n, 4, func(i int, b []byte) { s[i] = math.Float32frombits(le.Uint32(b)) })
	case TypeUint64:
		s := make([]uint64, n)
		return Array(s), d.fixed(n, 8, func(i int, b []byte) { s[i] = le.Uint64(b) })
	case TypeInt64:
		s := make([]int64, n)
		return Array(s), d.fixed(n, 8, func(i int, b []byte) { s[i] = int64(le.Uint64(b)) })
	default: // TypeFloat64; valueType admits nothing else
		s := make([]float64, n)
		return Array(s), d.fixed(n, 8, func(i int, b []byte) { s[i] = math.Float64frombits(le.Uint64(b)) })
	}
}

// parse reads the header, metadata and tensor infos and validates the
// tensor layout.
func (f *File) parse() error {
	d := &decoder{r: f.m.ReaderAt, mem: f.m.Data, size: f.Size}
	magic, err := d.take(len(Magic))
	if err != nil {
		return err
	}
	if string(magic) != Magic {
		return fmt.Errorf("%w: %q", ErrBadMagic, magic)
	}
	v, err := d.u32()
	if err != nil {
		return err
	}
	if v != 2 && v != 3 {
		if v&0xFFFF == 0 && v != 0 {
			return fmt.Errorf("%w %d (big-endian file?)", ErrVersion, v)
		}
		return fmt.Errorf("%w %d", ErrVersion, v)
	}
	f.Version = v
	// Minimum encodings: a tensor info is a name length, n_dims, one dim,
	// the type and the offset; a KV is a key length, a type and one byte.
	nt, err := d.count(8+4+8+4+8, "tensor")
	if err != nil {
		return err
	}
	nkv, err := d.count(8+4+1, "metadata")
	if err != nil {
		return err
	}

	f.KV = make([]KV, 0, min(nkv, 1024))
	f.keys = make(map[string]int, min(nkv, 1024))
	for range nkv {
		key, err := d.str()
		if err != nil {
			return err
		}
		if _, dup := f.keys[key]; dup {
			return fmt.Errorf("%w: key %q", ErrDuplicate, key)
		}
		t, err := d.valueType()
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		val, err := d.value(t, 0)
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KV{key, val})
	}

	f.Alignment = DefaultAlignment
	if v, ok := f.Lookup(KeyAlignment); ok {
		a, ok := v.Uint()
		if !ok || a == 0 || a > math.MaxUint32 || a&(a-1) != 0 {
			return fmt.Errorf("%w: %s = %v is not a power of two", ErrAlignment, KeyAlignment, v)
		}
		f.Alignment = int64(a)
	}

	f.Tensors = make([]*Tensor, 0, min(nt, 1024))
	f.tensors = make(map[string]*Tensor, min(nt, 1024))
	for range nt {
		t, err := d.tensorInfo()
		if err != nil {
			return err
		}
		if _, dup := f.tensors[t.Name]; dup {
			return &TensorError{Name: t.Name, Err: ErrDuplicate}
		}
		t.file = f
		f.tensors[t.Name] = t
		f.Tensors = append(f.Tensors, t)
	}
	var ok bool
	if f.DataOffset, ok = pad(d.pos, f.Alignment); !ok {
		return ErrAlignment
	}
	return f.layout()
}

func (d *decoder) tensorInfo() (*Tensor, error) {
	name, err := d.str()
	if err != nil {
		return nil, err
	}
	nd, err := d.u32()
	if err != nil {
		return nil, &TensorError{name, err}
	}
	if nd == 0 || nd > MaxDims {
		return nil, &TensorError{name, fmt.Errorf("%w: %d dimensions", ErrDims, nd)}
	}
	t := &Tensor{Name: name, Dims: make([]int64, nd)}
	elems := int64(1)
	for i := range t.Dims {
		x, err := d.u64()
		if err != nil {
			return nil, &TensorError{name, err}
		}
		if x == 0 || x > math.MaxInt64/uint64(elems) {
			return nil, &TensorError{name, fmt.Errorf("%w: dimension %d is %d", ErrDims, i, int64(x))}
		}
		t.Dims[i] = int64(x)
		elems *= int64(x)
	}
	typ, err := d.u32()
	if err != nil {
		return nil, &TensorError{name, err}
	}
	t.Type = quant.Type(typ)
	if len(quant.Candidates(t.Type)) == 0 {
		return nil, &TensorError{name, fmt.Errorf("%w %d", ErrUnknownType, typ)}
	}
	off, err := d.u64()
	if err != nil {
		return nil, &TensorError{name, err}
	}
	if off > math.MaxInt64 {
		return nil, &TensorError{name, fmt.Errorf("%w: offset %d", ErrTruncated, off)}
	}
	t.Offset = int64(off)
	return t, nil
}

// layout assigns each tensor its format and size and checks that the
// tensors tile the data section as ggml requires. For type id 42 it tries
// each layout for all such tensors (a file holds only one meaning) and
// keeps the one the offsets and the file size agree with.
func (f *File) layout() error {
	var ambiguous []*quant.Format
	for _, t := range f.Tensors {
		if c := quant.Candidates(t.Type); len(c) > 1 {
			ambiguous = c
			break
		}
	}
	if ambiguous == nil {
		_, _, err := f.assign(nil)
		return err
	}
	type try struct {
		c     *quant.Format
		exact bool
		fail  int
		err   error
	}
	tries := make([]try, len(ambiguous))
	var fits []int
	for i, c := range ambiguous {
		exact, fail, err := f.assign(c)
		tries[i] = try{c, exact, fail, err}
		if err == nil {
			fits = append(fits, i)
		}
	}
	switch {
	case len(fits) == 0:
		// Report the attempt that got furthest: its error is the telling one.
		best := tries[0]
		for _, tr := range tries[1:] {
			if tr.fail > best.fail {
				best = tr
			}
		}
		return best.err
	case len(fits) > 1:
		var exact []int
		for _, i := range fits {
			if tries[i].exact {
				exact = append(exact, i)
			}
		}
		if len(exact) != 1 {
			names := make([]string, len(fits))
			for k, i := range fits {
				names[k] = tries[i].c.Name
			}
			return fmt.Errorf("%w: the offsets fit %s alike", ErrAmbiguous, strings.Join(names, " and "))
		}
		fits = exact
	}
	_, _, err := f.assign(tries[fits[0]].c)
	if err != nil {
		return err
	}
	f.note(tries[fits[0]].c, len(fits) > 1)
	return nil
}

// assign gives every tensor a format (for an ambiguous id, as42) and size
// and checks the layout. It returns whether the data end exactly at the
// end of the file (with or without final padding), and on failure the
// index of the failing tensor.
func (f *File) assign(as42 *quant.Format) (exact bool, fail int, err error) {
	dataLen := f.Size - f.DataOffset
	if len(f.Tensors) > 0 && dataLen < 0 {
		return false, 0, fmt.Errorf("%w: data section at offset %d, file has %d bytes", ErrTruncated, f.DataOffset, f.Size)
	}
	var want int64 // where the next tensor must start
	for i, t := range f.Tensors {
		c := quant.Candidates(t.Type)
		t.Format = c[0]
		if len(c) > 1 {
			t.Format = as42
		}
		fail = i
		if t.Dims[0]%int64(t.Format.BlockElems) != 0 {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: ne[0] = %d, %s blocks hold %d", ErrBlockSize, t.Dims[0], t.Format.Name, t.Format.BlockElems)}
		}
		blocks := t.Elems() / int64(t.Format.BlockElems)
		if blocks > math.MaxInt64/int64(t.Format.BlockBytes) {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: %d blocks overflow", ErrDims, blocks)}
		}
		t.Size = blocks * int64(t.Format.BlockBytes)
		if t.Offset%f.Alignment != 0 {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: offset %d is not a multiple of %d", ErrAlignment, t.Offset, f.Alignment)}
		}
		if t.Offset != want {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: offset %d, expected %d after the previous tensor", ErrLayout, t.Offset, want)}
		}
		if t.Size > dataLen-t.Offset {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: %d bytes at data offset %d, %d bytes in the data section", ErrTruncated, t.Size, t.Offset, dataLen)}
		}
		end := t.Offset + t.Size
		padded, ok := pad(end, f.Alignment)
		if !ok {
			return false, i, &TensorError{t.Name, fmt.Errorf("%w: offset overflow", ErrTruncated)}
		}
		exact = end == dataLen || padded == dataLen
		want = padded
	}
	return exact, len(f.Tensors), nil
}

// note records on every tensor of an ambiguous id why it was read as c.
func (f *File) note(c *quant.Format, byEnd bool) {
	dataLen := f.Size - f.DataOffset
	for i, t := range f.Tensors {
		if t.Format != c {
			continue
		}
		extent := dataLen - t.Offset
		if i+1 < len(f.Tensors) {
			extent = f.Tensors[i+1].Offset - t.Offset
		}
		why := "fit"
		if byEnd {
			why = "fit, and only they end the file exactly,"
		}
		t.Resolution = fmt.Sprintf("type %d read as %s (group %d): %d-byte blocks %s the %d-byte extent",
			t.Type, c.Name, c.Group, c.BlockBytes, why, extent)
	}
}
