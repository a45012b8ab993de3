// Package testdata locates the shared test material (../shared/testdata
// beside the repository root) for tests, which skip when it is absent so a
// clone of the repository alone still passes.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Lookup returns the path of elem under ../shared/testdata and whether it
// exists; fuzz targets use it to seed their corpus when the data is there.
func Lookup(elem ...string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	p := filepath.Join(append([]string{dir, "..", "shared", "testdata"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		return p, false
	}
	return p, true
}

// Path returns the path of elem under ../shared/testdata, or skips t with a
// message naming what is missing.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p, ok := Lookup(elem...)
	if !ok {
		t.Skipf("shared testdata: %s is absent (it lives in ../shared/testdata beside the repository)", filepath.Join(elem...))
	}
	return p
}
