package gguf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"trit/internal/mmapfile"
	"trit/quant"
)

// rewrite copies every KV and tensor of f into a new Writer.
func rewrite(t testing.TB, f *File) *Writer {
	t.Helper()
	w := NewWriter()
	for _, kv := range f.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range f.Tensors {
		tn := tn
		err := w.AddTensorFunc(tn.Name, tn.Format, tn.Dims, func(dst io.Writer) error {
			_, err := io.Copy(dst, tn.Section())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func TestReference(t *testing.T) {
	for _, path := range referenceFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Size != int64(len(orig)) || f.Version != 3 || f.Alignment != 32 {
				t.Errorf("size %d version %d alignment %d", f.Size, f.Version, f.Alignment)
			}
			arch, _ := f.String("general.architecture")
			if strings.HasPrefix(name, "dspark-") {
				// A drafter: it borrows its target's embedding and head, so
				// the trunk checks below do not apply.
				if arch != "dflash" {
					t.Errorf("drafter architecture %q, want dflash", arch)
				}
				return
			}
			if want := strings.SplitN(name, "-", 2)[0]; arch != want {
				t.Errorf("architecture %q, want %q", arch, want)
			}
			if blocks, ok := f.Uint(arch + ".block_count"); !ok || blocks < 3 {
				t.Errorf("block_count %d %v", blocks, ok)
			}
			if toks, ok := f.Strings("tokenizer.ggml.tokens"); !ok || len(toks) != 512 {
				t.Errorf("tokens: %d %v", len(toks), ok)
			}
			if types, ok := f.Ints("tokenizer.ggml.token_type"); !ok || len(types) != 512 {
				t.Errorf("token_type: %d %v", len(types), ok)
			}
			if h, ok := f.Uint(arch + ".embedding_length"); !ok || h != 256 {
				t.Errorf("embedding_length %d", h)
			}
			want := wantType(name)
			emb := f.Tensor("token_embd.weight")
			if emb == nil || emb.Format != want || emb.Dims[0] != 256 || emb.Dims[1] != 512 {
				t.Fatalf("token_embd: %+v, want format %v", emb, want)
			}
			if (want.Type == quant.TypeQ2_0) != (emb.Resolution != "") {
				t.Errorf("resolution %q", emb.Resolution)
			}
			// Every tensor lies inside the file and the last one ends it.
			last := f.Tensors[len(f.Tensors)-1]
			if end, _ := pad(f.DataOffset+last.Offset+last.Size, f.Alignment); end != f.Size {
				t.Errorf("data end %d, file size %d", end, f.Size)
			}
			// Mapped data are the file's bytes.
			data, err := emb.Data()
			if err != nil {
				t.Fatal(err)
			}
			at := f.DataOffset + emb.Offset
			if !bytes.Equal(data, orig[at:at+emb.Size]) {
				t.Error("token_embd data differ from the file bytes")
			}

			// NewReader sees the same file.
			g, err := NewReader(bytes.NewReader(orig), int64(len(orig)))
			if err != nil {
				t.Fatal(err)
			}
			if len(g.KV) != len(f.KV) || len(g.Tensors) != len(f.Tensors) || g.DataOffset != f.DataOffset {
				t.Fatal("NewReader and Open disagree")
			}
			gd, err := g.Tensor(emb.Name).Data()
			if err != nil || !bytes.Equal(gd, data) {
				t.Fatalf("NewReader data: %v", err)
			}

			// Writing the file again reproduces it byte for byte.
			var out bytes.Buffer
			n, err := rewrite(t, f).WriteTo(&out)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(out.Len()) || !bytes.Equal(out.Bytes(), orig) {
				t.Errorf("rewritten file differs: %d bytes, original %d", out.Len(), len(orig))
			}
		})
	}
}

// wantType is the format of token_embd.weight in each reference file,
// from the file list in its README.
func wantType(name string) *quant.Format {
	switch {
	case strings.Contains(name, "-mix-"):
		return quant.Q4_K
	case strings.HasSuffix(name, "-f32.gguf"):
		return quant.F32
	case strings.HasSuffix(name, "-Q2_0g128.gguf"):
		return quant.Q2_0
	case strings.HasSuffix(name, "-Q2_0.gguf"):
		return quant.Q2_0g64
	}
	stem := strings.TrimSuffix(name, ".gguf")
	return quant.ByName(stem[strings.LastIndex(stem, "-")+1:])
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	short := filepath.Join(dir, "short.gguf")
	os.WriteFile(short, []byte("GG"), 0o644)
	if _, err := Open(short); !errors.Is(err, ErrTruncated) {
		t.Errorf("short file: %v", err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("GGML\x03\x00\x00\x00"), 0o644)
	if _, err := Open(bad); !errors.Is(err, ErrBadMagic) {
		t.Errorf("bad magic: %v", err)
	}
}

func TestClose(t *testing.T) {
	w := NewWriter()
	w.AddTensor("x", quant.F32, []int64{2}, make([]byte, 8))
	path := filepath.Join(t.TempDir(), "x.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.Tensors[0].Data(); !errors.Is(err, ErrClosed) {
		t.Errorf("Data after Close: %v", err)
	}
	if _, err := io.ReadAll(f.Tensors[0].Section()); !errors.Is(err, ErrClosed) {
		t.Errorf("Section after Close: %v", err)
	}
}

// minimal returns a valid file with one F32 tensor of n elements, built by
// hand.
func minimal(n uint64) []byte {
	var r raw
	r.header(3, 1, 1).str("general.architecture").u32(uint32(TypeString)).str("x")
	r.tensor("t", 0, 0, n).pad(32).zeros(int(4 * n)).pad(32)
	return r.Bytes()
}

func TestMalformed(t *testing.T) {
	ok := minimal(8)
	if _, err := parseBytes(ok); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	kvFile := func(key string, typ ValueType, val func(*raw)) []byte {
		var r raw
		r.header(3, 0, 1).str(key).u32(uint32(typ))
		val(&r)
		return r.Bytes()
	}
	tensorFile := func(n uint64, infos func(*raw), data int) []byte {
		var r raw
		r.header(3, n, 0)
		infos(&r)
		return r.pad(32).zeros(data).Bytes()
	}
	huge := uint64(1) << 62
	tests := []struct {
		name   string
		data   []byte
		want   error
		tensor string // name the *TensorError must carry, if any
	}{
		{"empty", nil, ErrTruncated, ""},
		{"bad magic", append([]byte("GGUX"), ok[4:]...), ErrBadMagic, ""},
		{"version 1", append(append([]byte("GGUF"), 1, 0, 0, 0), ok[8:]...), ErrVersion, ""},
		{"big-endian", append(append([]byte("GGUF"), 0, 0, 0, 3), ok[8:]...), ErrVersion, ""},
		{"cut header", ok[:20], ErrTruncated, ""},
		{"cut data", ok[:len(ok)-32], ErrTruncated, "t"},
		{"tensor count", new(raw).header(3, huge, 0).Bytes(), ErrTruncated, ""},
		{"kv count", new(raw).header(3, 0, huge).Bytes(), ErrTruncated, ""},
		{"key length", new(raw).header(3, 0, 1).u64(huge).Bytes(), ErrTruncated, ""},
		{"string length", kvFile("k", TypeString, func(r *raw) { r.u64(huge) }), ErrTruncated, ""},
		{"array count", kvFile("k", TypeArray, func(r *raw) { r.u32(uint32(TypeUint32)).u64(huge) }), ErrTruncated, ""},
		{"string array count", kvFile("k", TypeArray, func(r *raw) { r.u32(uint32(TypeString)).u64(3).u64(0).u64(0) }), ErrTruncated, ""},
		{"value type", kvFile("k", 13, func(r *raw) {}), ErrValueType, ""},
		{"array elem type", kvFile("k", TypeArray, func(r *raw) { r.u32(99).u64(0) }), ErrValueType, ""},
		{"nesting", kvFile("k", TypeArray, func(r *raw) {
			for range maxNesting + 1 {
				r.u32(uint32(TypeArray)).u64(1)
			}
			r.u32(uint32(TypeUint8)).u64(0)
		}), ErrNesting, ""},
		{"duplicate key", func() []byte {
			var r raw
			r.header(3, 0, 2)
			r.str("a").u32(uint32(TypeUint8)).WriteByte(1)
			r.str("a").u32(uint32(TypeUint8)).WriteByte(2)
			return r.Bytes()
		}(), ErrDuplicate, ""},
		{"alignment zero", kvFile(KeyAlignment, TypeUint32, func(r *raw) { r.u32(0) }), ErrAlignment, ""},
		{"alignment 48", kvFile(KeyAlignment, TypeUint32, func(r *raw) { r.u32(48) }), ErrAlignment, ""},
		{"alignment string", kvFile(KeyAlignment, TypeString, func(r *raw) { r.str("32") }), ErrAlignment, ""},
		{"zero dims", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0) }, 0), ErrDims, "a"},
		{"five dims", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0, 1, 1, 1, 1, 1) }, 0), ErrDims, "a"},
		{"zero dim", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0, 4, 0) }, 0), ErrDims, "a"},
		{"negative dim", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0, 1<<63) }, 0), ErrDims, "a"},
		{"dims overflow", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0, 1<<32, 1<<32) }, 0), ErrDims, "a"},
		{"bytes overflow", tensorFile(1, func(r *raw) { r.tensor("a", 0, 0, 1<<62) }, 0), ErrDims, "a"},
		{"unknown type", tensorFile(1, func(r *raw) { r.tensor("a", 77, 0, 32) }, 0), ErrUnknownType, "a"},
		{"block size", tensorFile(1, func(r *raw) { r.tensor("a", 2, 0, 16) }, 32), ErrBlockSize, "a"},
		{"duplicate tensor", tensorFile(2, func(r *raw) { r.tensor("a", 0, 0, 8).tensor("a", 0, 32, 8) }, 64), ErrDuplicate, "a"},
		{"misaligned", tensorFile(2, func(r *raw) { r.tensor("a", 0, 0, 8).tensor("b", 0, 36, 8) }, 96), ErrAlignment, "b"},
		{"overlap", tensorFile(2, func(r *raw) { r.tensor("a", 0, 0, 16).tensor("b", 0, 32, 8) }, 128), ErrLayout, "b"},
		{"gap", tensorFile(2, func(r *raw) { r.tensor("a", 0, 0, 8).tensor("b", 0, 64, 8) }, 128), ErrLayout, "b"},
		{"out of order", tensorFile(2, func(r *raw) { r.tensor("a", 0, 32, 8).tensor("b", 0, 0, 8) }, 64), ErrLayout, "a"},
		{"out of file", tensorFile(2, func(r *raw) { r.tensor("a", 0, 0, 8).tensor("b", 0, 32, 64) }, 64), ErrTruncated, "b"},
		{"offset overflow", tensorFile(1, func(r *raw) { r.tensor("a", 0, 1<<63, 8) }, 0), ErrTruncated, "a"},
		// Type 42: a [128] row is 34 bytes as group 128 and 36 as group
		// 64; padded to 64 both fit, so the file cannot say which it is.
		{"type 42 ambiguous", tensorFile(2, func(r *raw) { r.tensor("a", 42, 0, 128).tensor("b", 42, 64, 128) }, 128), ErrAmbiguous, ""},
		// 64 elements rule out group 128; as group 64 the 36 bytes overlap "b".
		{"type 42 neither", tensorFile(2, func(r *raw) { r.tensor("a", 42, 0, 64, 2).tensor("b", 0, 32, 8) }, 64), ErrLayout, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseBytes(tt.data)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v (file %v), want %v", err, f, tt.want)
			}
			var te *TensorError
			if errors.As(err, &te) != (tt.tensor != "") || (te != nil && te.Name != tt.tensor) {
				t.Errorf("error %v: want a TensorError for %q", err, tt.tensor)
			}
		})
	}
}

func TestType42(t *testing.T) {
	// One tensor [256, 32]: group 128 takes 64 blocks × 34 = 2176 bytes,
	// group 64 takes 128 × 18 = 2304. A following F32 tensor pins the extent.
	file := func(extent uint64) []byte {
		var r raw
		r.header(3, 2, 0).tensor("w", 42, 0, 256, 32).tensor("n", 0, extent, 8).pad(32)
		return r.zeros(int(extent) + 32).Bytes()
	}
	last := func(size int, trailing int) []byte {
		var r raw
		r.header(3, 1, 0).tensor("w", 42, 0, 128, 3).pad(32)
		return r.zeros(size + trailing).Bytes()
	}
	tests := []struct {
		name string
		data []byte
		want *quant.Format
		err  error
	}{
		{"g128 by offsets", file(2176), quant.Q2_0, nil},
		{"g64 by offsets", file(2304), quant.Q2_0g64, nil},
		{"neither", file(2240), nil, ErrLayout},
		// As the last tensor only the file end tells: 3 rows are 102 or
		// 108 bytes, both padded to 128, so only an unpadded end decides.
		{"last g128 unpadded", last(102, 0), quant.Q2_0, nil},
		{"last g64 unpadded", last(108, 0), quant.Q2_0g64, nil},
		{"last padded", last(128, 0), nil, ErrAmbiguous},
		{"last too short", last(101, 0), nil, ErrTruncated},
		{"last trailing", last(128, 64), nil, ErrAmbiguous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseBytes(tt.data)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			w := f.Tensor("w")
			if w.Format != tt.want {
				t.Errorf("format %v, want %v", w.Format, tt.want)
			}
			if !strings.Contains(w.Resolution, tt.want.Name) {
				t.Errorf("resolution %q", w.Resolution)
			}
		})
	}
}

// TestHostileAllocation checks that a tiny file claiming enormous counts
// fails before allocating anything of that size.
func TestHostileAllocation(t *testing.T) {
	var r raw
	r.header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1 << 40)
	data := r.Bytes()
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := parseBytes(data); !errors.Is(err, ErrTruncated) {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for a %d-byte file", allocs, len(data))
	}
}

// eofReader reports io.EOF along with the last bytes, as io.ReaderAt
// allows, or returns fewer bytes than asked when short is set.
type eofReader struct {
	b     []byte
	short bool
}

func (r eofReader) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, r.b[off:])
	if r.short && n > 0 && off > 64 {
		n--
	}
	if off+int64(n) >= int64(len(r.b)) {
		return n, io.EOF
	}
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

func TestReaderAtEOF(t *testing.T) {
	b := minimal(8)
	f, err := NewReader(eofReader{b: b}, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := f.Tensors[0].Data(); err != nil || len(d) != 32 {
		t.Errorf("Data: %d bytes, %v", len(d), err)
	}
	f.m = mmapfile.NewReader(eofReader{b: b, short: true}, int64(len(b)))
	f.m.Truncated = ErrTruncated
	if _, err := f.Tensors[0].Data(); !errors.Is(err, ErrTruncated) {
		t.Errorf("short read: %v", err)
	}
	// A reader shorter than the size it was given.
	if _, err := NewReader(bytes.NewReader(b[:40]), int64(len(b))); !errors.Is(err, ErrTruncated) {
		t.Errorf("short reader: %v", err)
	}
}

// TestOpenLarge maps a sparse 4 GiB file: Open must read only the header.
func TestOpenLarge(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("needs a 64-bit address space")
	}
	const n = 1 << 30 // F32 elements: 4 GiB of data
	var r raw
	r.header(3, 1, 0).tensor("big", 0, 0, n).pad(32)
	path := filepath.Join(t.TempDir(), "big.gguf")
	if err := os.WriteFile(path, r.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(r.Len())+4*n); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.Tensor("big").Data()
	if err != nil || len(d) != 4*n || d[len(d)-1] != 0 {
		t.Fatalf("Data: %d bytes, %v", len(d), err)
	}
}
