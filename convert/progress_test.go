package convert

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestProgressWriter(t *testing.T) {
	var out bytes.Buffer
	if w := progressWriter(io.Discard, 1<<20, &out); w != io.Discard {
		t.Error("small outputs get a progress line")
	}
	total := int64(100 << 20)
	w := progressWriter(io.Discard, total, &out)
	chunk := make([]byte, 1<<20)
	for range 100 {
		w.Write(chunk)
	}
	s := out.String()
	if !strings.Contains(s, "  5%") || !strings.Contains(s, "100%\n") || strings.Count(s, "\r") != 20 {
		t.Errorf("progress output %q", s)
	}
}
