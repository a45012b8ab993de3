package mmapfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenSlice(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello, world"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := f.Slice(7, 5); err != nil || string(b) != "world" {
		t.Errorf("Slice(7, 5) = %q, %v", b, err)
	}
	for _, c := range [][2]int64{{8, 5}, {-1, 2}, {0, -1}, {13, 0}} {
		if _, err := f.Slice(c[0], c[1]); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Slice(%d, %d): %v", c[0], c[1], err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Slice(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
