//go:build !unix

package mmapfile

import "os"

// Open opens the file at path; on this platform it is not memory-mapped:
// Slice reads what is asked for.
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
	return &File{Size: st.Size(), ReaderAt: fd, closer: fd.Close}, nil
}
