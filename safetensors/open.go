package safetensors

import (
	"fmt"

	"trit/internal/mmapfile"
)

// Open maps the safetensors file at path read-only into memory (where the
// platform allows; else it reads tensor data when asked for) and validates
// its header. Tensor data are slices of the mapping, read only when
// touched. Call Close to unmap.
func Open(path string) (*File, error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	m.Closed, m.Truncated = ErrClosed, ErrTruncated
	f := &File{Size: m.Size, m: m}
	if err := f.parse(); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
