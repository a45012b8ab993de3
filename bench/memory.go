package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrNoProc is returned where /proc cannot be read (not Linux).
var ErrNoProc = errors.New("bench: /proc unavailable")

// PeakRSS returns the process's resident-set high-water mark (VmHWM) in
// bytes. It is process-wide: it counts every allocation and every touched
// page of a memory-mapped file since the process started or since the mark
// was last reset.
func PeakRSS() (int64, error) { return statusField("VmHWM:") }

// RSS returns the process's current resident set (VmRSS) in bytes.
func RSS() (int64, error) { return statusField("VmRSS:") }

// MemAvailable returns the memory the system can give without swapping
// (MemAvailable in /proc/meminfo) in bytes.
func MemAvailable() (int64, error) { return procField("/proc/meminfo", "MemAvailable:") }

func statusField(name string) (int64, error) { return procField("/proc/self/status", name) }

// procField reads a "Name: value kB" line of a /proc file.
func procField(path, name string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoProc, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == name {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bench: %s %q: %v", name, f[1], err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%w: no %s line", ErrNoProc, name)
}

// resetPeakRSS sets VmHWM back to the current RSS (Linux: writing 5 to
// /proc/self/clear_refs), so the next PeakRSS covers only what follows. It
// reports whether the reset worked; where it did not, PeakRSS stays the
// high-water mark since the process started.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
