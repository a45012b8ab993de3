//go:build !unix

package safetensors

import "os"

// Open opens the safetensors file at path and validates its header. On
// this platform the file is not memory-mapped: tensor data are read when
// asked for. Call Close to release the file.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	f, err := NewReader(fd, st.Size())
	if err != nil {
		fd.Close()
		return nil, err
	}
	f.closer = fd.Close
	return f, nil
}
