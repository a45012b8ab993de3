// Package mmapfile opens a file for random access: memory-mapped read-only
// where the platform allows, so readers of container formats hand out
// zero-copy slices of it, else through the open file.
package mmapfile

import (
	"bytes"
	"errors"
	"io"
)

// ErrClosed is returned by Slice after Close unless File.Closed is set.
var ErrClosed = errors.New("mmapfile: file closed")

// File is an open file: Data is the whole mapping, nil where the file is
// read through ReaderAt instead.
type File struct {
	Data []byte
	Size int64
	io.ReaderAt
	// Closed and Truncated, if set, are what Slice and Section report
	// after Close and for a short read (the owner's sentinels); else
	// ErrClosed and io.ErrUnexpectedEOF.
	Closed, Truncated error

	closer func() error
	closed bool
}

// Slice returns n bytes at off: a read-only slice of the mapping (valid
// until Close) or a fresh copy read from the file. A short read is
// reported as io.ErrUnexpectedEOF.
func (f *File) Slice(off, n int64) ([]byte, error) {
	if f.closed {
		return nil, or(f.Closed, ErrClosed)
	}
	if off < 0 || n < 0 || off > f.Size-n {
		return nil, or(f.Truncated, io.ErrUnexpectedEOF)
	}
	if f.Data != nil {
		return f.Data[off : off+n : off+n], nil
	}
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if int64(got) == n {
		return buf, nil // a ReaderAt may report io.EOF along with the last byte
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		err = or(f.Truncated, io.ErrUnexpectedEOF)
	}
	return nil, err
}

func or(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// Close unmaps or closes the file.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.Data = nil
	return f.closer()
}

// NewReader wraps r, size bytes, as a File that is not mapped; Close does
// not close r.
func NewReader(r io.ReaderAt, size int64) *File {
	return &File{Size: size, ReaderAt: r, closer: func() error { return nil }}
}

// Section returns a reader over n bytes at off, for streaming; after Close
// it reads the Closed error.
func (f *File) Section(off, n int64) *io.SectionReader {
	var r io.ReaderAt = closedReader{or(f.Closed, ErrClosed)}
	if !f.closed {
		r = f.ReaderAt
	}
	return io.NewSectionReader(r, off, n)
}

type closedReader struct{ err error }

func (c closedReader) ReadAt([]byte, int64) (int, error) { return 0, c.err }

// FromBytes is a File over b as if b were its mapping.
func FromBytes(b []byte) *File {
	return &File{Data: b, Size: int64(len(b)), ReaderAt: bytes.NewReader(b), closer: func() error { return nil }}
}
