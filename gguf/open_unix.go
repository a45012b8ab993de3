//go:build unix

package gguf

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open maps the GGUF file at path read-only into memory and parses its
// header. Tensor data are slices of the mapping: nothing beyond the header
// is read until it is touched. Call Close to unmap.
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
	if size < int64(len(Magic)) {
		return nil, fmt.Errorf("%w: %s has %d bytes", ErrTruncated, path, size)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s: %d bytes do not fit in memory", path, size)
	}
	m, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f := &File{Size: size, r: bytes.NewReader(m), mapped: m}
	if err := f.parse(); err != nil {
		unix.Munmap(m)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = func() error { return unix.Munmap(m) }
	return f, nil
}
