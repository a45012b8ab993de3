package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden is the exact file TestWriterGolden's writer must produce: the
// 8-byte length 144, the header padded with four spaces to a multiple of
// 8, then 1.0f and -2.0f little-endian, then the bytes 1 2 3.
var golden = "\x90\x00\x00\x00\x00\x00\x00\x00" +
	`{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[1,3],"data_offsets":[8,11]}}` +
	"    " +
	"\x00\x00\x80\x3f\x00\x00\x00\xc0" +
	"\x01\x02\x03"

func goldenWriter(t testing.TB) *Writer {
	w := NewWriter()
	w.SetMetadata("format", "pt")
	if err := w.Add("a", F32, []int64{2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("b", U8, []int64{1, 3}, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWriterGolden(t *testing.T) {
	var b bytes.Buffer
	if _, err := goldenWriter(t).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != golden {
		t.Errorf("wrote\n%q\nwant\n%q", b.String(), golden)
	}
}

func TestReadGolden(t *testing.T) {
	f, err := NewReader(strings.NewReader(golden), int64(len(golden)))
	if err != nil {
		t.Fatal(err)
	}
	if f.DataOffset != 152 || f.Metadata["format"] != "pt" || len(f.Tensors) != 2 {
		t.Fatalf("data offset %d, metadata %v, %d tensors", f.DataOffset, f.Metadata, len(f.Tensors))
	}
	a := f.Tensor("a")
	v, err := a.Floats()
	if err != nil || len(v) != 2 || v[0] != 1 || v[1] != -2 {
		t.Errorf("a = %v, %v; want [1 -2]", v, err)
	}
	b := f.Tensor("b")
	d, err := b.Data()
	if err != nil || !bytes.Equal(d, []byte{1, 2, 3}) || b.Elems() != 3 {
		t.Errorf("b = %v, %v (%d elems)", d, err, b.Elems())
	}
	if _, err := b.Floats(); !errors.Is(err, ErrNotFloat) {
		t.Errorf("Floats of U8: %v, want ErrNotFloat", err)
	}
}

func TestOpenWriteFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := goldenWriter(t).WriteFile(p); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	if string(raw) != golden {
		t.Fatal("WriteFile wrote other bytes than WriteTo")
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Tensor("b").Data()
	if !bytes.Equal(d, []byte{1, 2, 3}) {
		t.Errorf("b = %v", d)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tensor("b").Data(); !errors.Is(err, ErrClosed) {
		t.Errorf("Data after Close: %v, want ErrClosed", err)
	}
}

func TestDecodeFloats(t *testing.T) {
	cases := []struct {
		dt   DType
		data []byte
		want float32
	}{
		{F32, []byte{0, 0, 0xc0, 0x3f}, 1.5},
		{F16, []byte{0x00, 0x3e}, 1.5},
		{BF16, []byte{0xc0, 0x3f}, 1.5},
		{F64, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, 1.5},
	}
	for _, c := range cases {
		got := make([]float32, 1)
		DecodeFloats(got, c.dt, c.data)
		if got[0] != c.want {
			t.Errorf("%s %x = %g, want %g", c.dt, c.data, got[0], c.want)
		}
	}
}

// file builds a safetensors image from a raw header and data length.
func file(hdr string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	return append(b, make([]byte, data)...)
}

func TestReadErrors(t *testing.T) {
	huge := binary.LittleEndian.AppendUint64(nil, MaxHeaderSize+1)
	cases := []struct {
		name string
		img  []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short length", []byte{1, 0, 0}, ErrTruncated},
		{"huge header", append(huge, "{}"...), ErrHeaderSize},
		{"header past end", binary.LittleEndian.AppendUint64(nil, 100), ErrTruncated},
		{"tiny header", file("{", 0), ErrHeaderSize},
		{"not an object", file(`["a"]`, 0), ErrHeader},
		{"bad json", file(`{"a":}`, 0), ErrHeader},
		{"trailing garbage", file(`{}x`, 0), ErrHeader},
		{"unknown dtype", file(`{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}`, 1), ErrDType},
		{"missing dtype", file(`{"a":{"shape":[1],"data_offsets":[0,1]}}`, 1), ErrDType},
		{"unknown field", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}`, 1), ErrHeader},
		{"null entry", file(`{"a":null}`, 0), ErrHeader},
		{"negative dim", file(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}`, 1), ErrShape},
		{"fractional dim", file(`{"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}}`, 1), ErrHeader},
		{"no shape", file(`{"a":{"dtype":"U8","data_offsets":[0,1]}}`, 1), ErrShape},
		{"too many dims", file(`{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}`, 1), ErrShape},
		{"overflow", file(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,1]}}`, 1), ErrShape},
		{"one offset", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}}`, 1), ErrOffsets},
		{"reversed offsets", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}`, 1), ErrOffsets},
		{"past end", file(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, 1), ErrOffsets},
		{"size mismatch", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,2]}}`, 2), ErrDataSize},
		{"overlap", file(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, 3), ErrOverlap},
		{"duplicate", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2), ErrDuplicate},
		{"two metadata", file(`{"__metadata__":{},"__metadata__":{}}`, 0), ErrHeader},
		{"metadata not strings", file(`{"__metadata__":{"a":1}}`, 0), ErrHeader},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(c.img), int64(len(c.img)))
			if !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestReadAccepts(t *testing.T) {
	cases := []struct {
		name, hdr string
		data      int
	}{
		{"empty header", `{}`, 0},
		{"scalar", `{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, 4},
		{"zero-size tensors share an offset", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0,3],"data_offsets":[0,0]}}`, 0},
		{"out of order", `{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, 2},
		{"padded", `{}      `, 0},
	}
	for _, c := range cases {
		img := file(c.hdr, c.data)
		if _, err := NewReader(bytes.NewReader(img), int64(len(img))); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	if err := w.Add("a", "Q4", []int64{1}, []byte{0}); !errors.Is(err, ErrDType) {
		t.Errorf("unknown dtype: %v", err)
	}
	if err := w.Add(MetadataKey, U8, []int64{1}, []byte{0}); !errors.Is(err, ErrHeader) {
		t.Errorf("metadata name: %v", err)
	}
	if err := w.Add("a", U8, []int64{1}, []byte{0}); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("a", U8, []int64{1}, []byte{0}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	if err := w.Add("b", U8, []int64{2}, []byte{0}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := w.WriteFile(p); !errors.Is(err, ErrDataSize) {
		t.Errorf("short data: %v, want ErrDataSize", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("failed WriteFile left %s behind", p)
	}
}

func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	shard := func(name string, tensors ...string) {
		w := NewWriter()
		for _, n := range tensors {
			if err := w.Add(n, U8, []int64{1}, []byte{n[0]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	index := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard("model-00001-of-00002.safetensors", "a", "b")
	shard("model-00002-of-00002.safetensors", "c")
	index(`{"metadata":{"total_size":3},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}}`)
	s, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		d, err := s.Tensor(n).Data()
		if err != nil || d[0] != n[0] {
			t.Errorf("%s = %v, %v", n, d, err)
		}
	}
	if len(s.Tensors) != 3 || len(s.Files) != 2 {
		t.Errorf("%d tensors in %d files", len(s.Tensors), len(s.Files))
	}
	s.Close()

	bad := []struct{ name, index string }{
		{"escape", `{"weight_map":{"a":"../x.safetensors"}}`},
		{"missing tensor", `{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors","d":"model-00002-of-00002.safetensors"}}`},
		{"unlisted tensor", `{"weight_map":{"a":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}}`},
		{"wrong shard", `{"weight_map":{"a":"model-00002-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}}`},
		{"empty", `{"weight_map":{}}`},
		{"not json", `{`},
	}
	for _, b := range bad {
		index(b.index)
		if s, err := OpenDir(dir); err == nil {
			s.Close()
			t.Errorf("%s: opened", b.name)
		}
	}

	single := t.TempDir()
	w := goldenWriter(t)
	if err := w.WriteFile(filepath.Join(single, SingleFile)); err != nil {
		t.Fatal(err)
	}
	s, err = OpenDir(single)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tensor("a") == nil {
		t.Error("single-file set lacks a")
	}
	s.Close()
}
