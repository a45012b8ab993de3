package gguf

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"
	"trit/internal/testdata"
)

// referenceDir returns ../shared/testdata/reference, skipping the test
// without it.
func referenceDir(t testing.TB) string { return testdata.Path(t, "reference") }

// referenceFiles lists the *.gguf files of the reference set.
func referenceFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(referenceDir(t), "*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no reference GGUF files")
	}
	return files
}

// raw builds GGUF bytes by hand, including malformed ones.
type raw struct{ bytes.Buffer }

func (r *raw) u32(x uint32) *raw { binary.Write(&r.Buffer, binary.LittleEndian, x); return r }
func (r *raw) u64(x uint64) *raw { binary.Write(&r.Buffer, binary.LittleEndian, x); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.WriteString(s); return r }

func (r *raw) header(version uint32, nt, nkv uint64) *raw {
	r.WriteString(Magic)
	return r.u32(version).u64(nt).u64(nkv)
}

// tensor writes one tensor info.
func (r *raw) tensor(name string, typ uint32, off uint64, dims ...uint64) *raw {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(typ).u64(off)
}

// pad pads with zeros to a multiple of align.
func (r *raw) pad(align int) *raw {
	for r.Len()%align != 0 {
		r.WriteByte(0)
	}
	return r
}

// zeros appends n zero bytes.
func (r *raw) zeros(n int) *raw { r.Write(make([]byte, n)); return r }

func parseBytes(b []byte) (*File, error) { return NewReader(bytes.NewReader(b), int64(len(b))) }
