package gguf

import (
	"fmt"

	"trit/internal/mmapfile"
)

// Open maps the GGUF file at path read-only into memory (where the
// platform allows; else it reads tensor data when asked for) and parses
// its header. Tensor data are slices of the mapping: nothing beyond the
// header is read until it is touched. Call Close to unmap.
func Open(path string) (*File, error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	m.Closed, m.Truncated = ErrClosed, ErrTruncated
	if m.Size < int64(len(Magic)) {
		m.Close()
		return nil, fmt.Errorf("%w: %s has %d bytes", ErrTruncated, path, m.Size)
	}
	f := &File{Size: m.Size, m: m}
	if err := f.parse(); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
