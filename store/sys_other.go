//go:build !(linux || darwin || freebsd)

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// diskFree cannot tell on this platform; pulls proceed without the check.
func diskFree(string) (int64, bool, error) { return 0, false, nil }

// tryLock creates p exclusively. Unlike flock, a pull killed here leaves
// the file behind: the wait message names it, to be removed by hand.
func tryLock(p string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: lock: %w", err)
	}
	f.Close()
	return func() { os.Remove(p) }, true, nil
}
