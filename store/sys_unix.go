//go:build linux || darwin || freebsd

package store

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// diskFree reports the bytes available to unprivileged users under dir.
func diskFree(dir string) (int64, bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false, fmt.Errorf("store: statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), true, nil
}

// tryLock takes an exclusive flock on the file p without waiting. The
// kernel drops the lock when the process ends, however it ends, so a
// killed pull never leaves a stale lock behind.
func tryLock(p string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("store: lock: %w", err)
	}
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("store: lock %s: %w", p, err)
	}
	return func() {
		unix.Flock(fd, unix.LOCK_UN)
		f.Close()
	}, true, nil
}
