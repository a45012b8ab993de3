package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"trit/quant"
)

// sameValue compares two values bit for bit (so NaNs compare equal).
func sameValue(a, b Value) bool {
	if a.Type() != b.Type() || a.Valid() != b.Valid() {
		return false
	}
	if a.Type() != TypeArray {
		return a.bits == b.bits && a.str == b.str
	}
	ea, _ := a.ElemType()
	eb, _ := b.ElemType()
	if ea != eb || a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !sameValue(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

func randString(r *rand.Rand) string {
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// randArray returns an array of n random elements of type et.
func randArray(r *rand.Rand, et ValueType, n, depth int) Value {
	switch et {
	case TypeUint8:
		return Array(fill(n, func() uint8 { return uint8(r.Uint32()) }))
	case TypeInt8:
		return Array(fill(n, func() int8 { return int8(r.Uint32()) }))
	case TypeUint16:
		return Array(fill(n, func() uint16 { return uint16(r.Uint32()) }))
	case TypeInt16:
		return Array(fill(n, func() int16 { return int16(r.Uint32()) }))
	case TypeUint32:
		return Array(fill(n, r.Uint32))
	case TypeInt32:
		return Array(fill(n, func() int32 { return int32(r.Uint32()) }))
	case TypeFloat32:
		return Array(fill(n, func() float32 { return math.Float32frombits(r.Uint32()) }))
	case TypeBool:
		return Array(fill(n, func() bool { return r.IntN(2) == 1 }))
	case TypeString:
		return Array(fill(n, func() string { return randString(r) }))
	case TypeUint64:
		return Array(fill(n, r.Uint64))
	case TypeInt64:
		return Array(fill(n, func() int64 { return int64(r.Uint64()) }))
	case TypeFloat64:
		return Array(fill(n, func() float64 { return math.Float64frombits(r.Uint64()) }))
	}
	return Array(fill(n, func() Value {
		return randArray(r, ValueType(r.IntN(13)), r.IntN(4), depth+1)
	}))
}

func fill[T any](n int, gen func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = gen()
	}
	return s
}

func randValue(r *rand.Rand) Value {
	t := ValueType(r.IntN(13))
	switch t {
	case TypeString:
		return String(randString(r))
	case TypeArray:
		et := ValueType(r.IntN(13))
		if et == TypeArray && r.IntN(2) == 0 {
			et = TypeInt32 // keep nesting occasional
		}
		return randArray(r, et, r.IntN(20), 0)
	}
	return scalar(t, r.Uint64()).normalize()
}

// normalize trims random bits to what the type holds, as the decoder does.
func (v Value) normalize() Value {
	switch v.typ {
	case TypeUint8:
		return Uint8(uint8(v.bits))
	case TypeInt8:
		return Int8(int8(v.bits))
	case TypeUint16:
		return Uint16(uint16(v.bits))
	case TypeInt16:
		return Int16(int16(v.bits))
	case TypeUint32:
		return Uint32(uint32(v.bits))
	case TypeInt32:
		return Int32(int32(v.bits))
	case TypeFloat32:
		return Float32(math.Float32frombits(uint32(v.bits)))
	case TypeBool:
		return Bool(v.bits&1 == 1)
	}
	return v
}

type randTensor struct {
	name   string
	format *quant.Format
	dims   []int64
	data   []byte
}

// TestRoundTripProperty writes random metadata (every type, nested arrays)
// and tensors of every format, reads them back and compares.
func TestRoundTripProperty(t *testing.T) {
	iters := 200
	if testing.Short() {
		iters = 30
	}
	for seed := range uint64(iters) {
		r := rand.New(rand.NewPCG(seed, 42))
		w := NewWriter()
		var kvs []KV
		if r.IntN(4) == 0 {
			kvs = append(kvs, KV{KeyAlignment, Uint32(uint32(8) << r.IntN(4))})
		}
		for i := range r.IntN(30) {
			kvs = append(kvs, KV{fmt.Sprintf("k%d.%s", i, randString(r)), randValue(r)})
		}
		for _, kv := range kvs {
			if err := w.AddKV(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
		}
		// A file holds one meaning of type 42.
		q2 := quant.Q2_0
		if r.IntN(2) == 0 {
			q2 = quant.Q2_0g64
		}
		var tensors []randTensor
		for i := range r.IntN(8) {
			f := quant.All[r.IntN(len(quant.All))]
			if f.Type == quant.TypeQ2_0 {
				f = q2
			}
			dims := make([]int64, 1+r.IntN(MaxDims))
			for j := range dims {
				dims[j] = int64(1 + r.IntN(3))
			}
			dims[0] *= int64(f.BlockElems)
			if f.Type == quant.TypeQ2_0 {
				// 32 blocks of 128: the layouts differ by 64 bytes, so
				// they pad to different sizes under any alignment used here.
				dims[0] = 4096
				if len(dims) > 1 {
					dims[0], dims[1] = 128, 32
				}
			}
			n := int64(f.BlockBytes)
			for _, d := range dims {
				n *= d
			}
			n /= int64(f.BlockElems)
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(r.Uint32())
			}
			tensors = append(tensors, randTensor{fmt.Sprintf("t%d", i), f, dims, data})
			if err := w.AddTensor(tensors[i].name, f, dims, data); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := parseBytes(buf.Bytes())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(f.KV) != len(kvs) || len(f.Tensors) != len(tensors) {
			t.Fatalf("seed %d: %d KVs %d tensors, want %d %d", seed, len(f.KV), len(f.Tensors), len(kvs), len(tensors))
		}
		for i, kv := range kvs {
			if f.KV[i].Key != kv.Key || !sameValue(f.KV[i].Value, kv.Value) {
				t.Fatalf("seed %d: KV %d = %q %v, want %q %v", seed, i, f.KV[i].Key, f.KV[i].Value, kv.Key, kv.Value)
			}
		}
		for i, want := range tensors {
			got := f.Tensors[i]
			data, err := got.Data()
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != want.name || got.Format != want.format || !bytes.Equal(data, want.data) ||
				fmt.Sprint(got.Dims) != fmt.Sprint(want.dims) || got.Offset%f.Alignment != 0 {
				t.Fatalf("seed %d: tensor %d = %s %v %v, want %s %v %v", seed, i, got.Name, got.Format, got.Dims, want.name, want.format, want.dims)
			}
		}
		// Writing what was read gives the same bytes.
		var again bytes.Buffer
		if _, err := rewrite(t, f).WriteTo(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("seed %d: second write differs", seed)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	f32 := make([]byte, 32)
	tests := []struct {
		name string
		add  func(w *Writer) error
		want error
	}{
		{"duplicate key", func(w *Writer) error { w.AddKV("a", Uint8(1)); return w.AddKV("a", Uint8(2)) }, ErrDuplicate},
		{"zero value", func(w *Writer) error { return w.AddKV("a", Value{}) }, nil},
		{"array of scalars as arrays", func(w *Writer) error { return w.AddKV("a", Array([]Value{Uint8(1)})) }, nil},
		{"alignment type", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint64(32)) }, ErrAlignment},
		{"alignment value", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint32(24)) }, ErrAlignment},
		{"duplicate tensor", func(w *Writer) error {
			w.AddTensor("t", quant.F32, []int64{8}, f32)
			return w.AddTensor("t", quant.F32, []int64{8}, f32)
		}, ErrDuplicate},
		{"no format", func(w *Writer) error { return w.AddTensor("t", nil, []int64{8}, f32) }, ErrUnknownType},
		{"no dims", func(w *Writer) error { return w.AddTensor("t", quant.F32, nil, nil) }, ErrDims},
		{"five dims", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{1, 1, 1, 1, 8}, f32) }, ErrDims},
		{"zero dim", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{8, 0}, nil) }, ErrDims},
		{"overflow", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{1 << 62}, nil) }, ErrDims},
		{"block size", func(w *Writer) error { return w.AddTensor("t", quant.Q8_0, []int64{16}, f32) }, ErrBlockSize},
		{"data size", func(w *Writer) error { return w.AddTensor("t", quant.F32, []int64{4}, f32) }, ErrDataSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.add(NewWriter())
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestWriteFileFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, write := range []func(io.Writer) error{
		func(io.Writer) error { return boom },
		func(w io.Writer) error { _, err := w.Write(make([]byte, 4)); return err }, // short
	} {
		w := NewWriter()
		w.AddTensorFunc("t", quant.F32, []int64{4}, write)
		err := w.WriteFile(path)
		var te *TensorError
		if !errors.As(err, &te) || te.Name != "t" {
			t.Errorf("got %v, want a TensorError for t", err)
		}
	}
	old, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(old) != "old" || len(entries) != 1 {
		t.Errorf("failed writes left %q and %d entries", old, len(entries))
	}
	if err := NewWriter().WriteFile(filepath.Join(dir, "no", "such", "dir.gguf")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

func TestWriterAlignment(t *testing.T) {
	w := NewWriter()
	w.AddKV(KeyAlignment, Uint32(256))
	w.AddTensor("a", quant.F32, []int64{3}, make([]byte, 12))
	w.AddTensor("b", quant.F16, []int64{5}, make([]byte, 10))
	path := filepath.Join(t.TempDir(), "a.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Alignment != 256 || f.DataOffset%256 != 0 || f.Tensor("b").Offset != 256 || f.Size != f.DataOffset+512 {
		t.Errorf("alignment %d data offset %d b at %d size %d", f.Alignment, f.DataOffset, f.Tensor("b").Offset, f.Size)
	}
}

// TestNestingLimit checks that the writer and the reader agree on how
// deeply arrays may nest.
func TestNestingLimit(t *testing.T) {
	nested := func(levels int) Value {
		v := Array([]uint8{7})
		for range levels - 1 {
			v = Array([]Value{v})
		}
		return v
	}
	w := NewWriter()
	if err := w.AddKV("deep", nested(maxNesting)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("deeper", nested(maxNesting+1)); !errors.Is(err, ErrNesting) {
		t.Errorf("%d levels: %v", maxNesting+1, err)
	}
	var b bytes.Buffer
	w.WriteTo(&b)
	f, err := parseBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := f.Lookup("deep")
	for range maxNesting - 1 {
		v = v.Index(0)
	}
	if x, _ := v.Index(0).Uint(); x != 7 {
		t.Errorf("innermost element %v", v)
	}
}
