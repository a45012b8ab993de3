//go:build unix

package mmapfile

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open maps the file at path read-only into memory; nothing is read until
// it is touched.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close() // the mapping outlives the descriptor
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %d bytes do not fit in memory", path, size)
	}
	if size == 0 {
		return &File{ReaderAt: bytes.NewReader(nil), closer: func() error { return nil }}, nil
	}
	m, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return &File{Data: m, Size: size, ReaderAt: bytes.NewReader(m), closer: func() error { return unix.Munmap(m) }}, nil
}
