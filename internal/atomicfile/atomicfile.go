// Package atomicfile creates files that appear whole or not at all.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write creates path by calling write on a temporary file in the same
// directory and renaming it over path only if write and the flush to disk
// succeed, so a failure never leaves a partial file behind.
func Write(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
