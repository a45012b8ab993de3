//go:build unix

package safetensors

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open maps the safetensors file at path read-only into memory and
// validates its header. Tensor data are slices of the mapping, read only
// when touched. Call Close to unmap.
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
	if size < 8 {
		return nil, fmt.Errorf("%s: %w: %d bytes", path, ErrTruncated, size)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("safetensors: %s: %d bytes do not fit in memory", path, size)
	}
	m, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("safetensors: mmap %s: %w", path, err)
	}
	f := &File{Size: size, r: bytes.NewReader(m), mapped: m}
	if err := f.parse(); err != nil {
		unix.Munmap(m)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = func() error { return unix.Munmap(m) }
	return f, nil
}
