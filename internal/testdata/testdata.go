// Package testdata locates the shared test material (../shared/testdata
// beside the repository root) for tests, which skip when it is absent so a
// clone of the repository alone still passes.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of elem under ../shared/testdata, or skips t with a
// message naming what is missing.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("shared testdata: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared testdata: repository root (go.mod) not found")
		}
		dir = parent
	}
	p := filepath.Join(append([]string{dir, "..", "shared", "testdata"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared testdata: %s is absent (it lives in ../shared/testdata beside the repository)", p)
	}
	return p
}
