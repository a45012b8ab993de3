package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
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

// MeasureBandwidth returns the read bandwidth of this machine's memory in
// bytes/s with the given number of threads: the best of three passes of
// summing a 512 MiB buffer, split evenly between the threads. It is what
// a decode step's ceiling is computed from (Row.Ceiling).
func MeasureBandwidth(threads int) float64 {
	threads = max(threads, 1)
	buf := make([]uint64, 512<<20/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	var best float64
	sums := make([]uint64, threads)
	for range 3 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[t] = readSum(buf[t*len(buf)/threads : (t+1)*len(buf)/threads])
			}()
		}
		wg.Wait()
		best = max(best, float64(len(buf)*8)/time.Since(t0).Seconds())
	}
	bandwidthSink = sums[0]
	return best
}

// bandwidthSink keeps the sums alive, so the reads are not optimised away.
var bandwidthSink uint64

// readSum sums x in four independent chains, enough for the loads to
// stream at the memory's pace.
func readSum(x []uint64) uint64 {
	var a, b, c, d uint64
	for ; len(x) >= 4; x = x[4:] {
		a += x[0]
		b += x[1]
		c += x[2]
		d += x[3]
	}
	for _, v := range x {
		a += v
	}
	return a + b + c + d
}
