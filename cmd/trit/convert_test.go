package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"trit/gguf"
	"trit/internal/testdata"
)

// TestConvertMLX runs the whole CLI path: a reference GGUF to an MLX pack,
// `trit logits -m PACK` giving the GGUF's logits, and the pack back to a
// GGUF with the same tensor bytes; a lossy layout is refused.
func TestConvertMLX(t *testing.T) {
	ref := testdata.Path(t, "reference", "qwen3-tern-Q2_0g128.gguf")
	dir := t.TempDir()
	pack := filepath.Join(dir, "pack")
	if code, out, errOut := trit(t, "convert", "mlx", ref, pack); code != 0 || !strings.Contains(out, "lossless") {
		t.Fatalf("convert mlx: code %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := trit(t, "convert", "mlx", ref, pack); code != 1 {
		t.Errorf("converting onto an existing folder: code %d, want 1", code)
	}
	_, want, _ := trit(t, "logits", "-m", ref, "--ids", "1,2,3", "--json")
	code, got, errOut := trit(t, "logits", "-m", pack, "--ids", "1,2,3", "--json")
	if code != 0 || got != want {
		t.Errorf("logits of the pack differ from the GGUF's (code %d)\n%s", code, errOut)
	}
	back := filepath.Join(dir, "back.gguf")
	if code, out, errOut := trit(t, "convert", "gguf", pack, back, "--type", "Q2_0"); code != 0 {
		t.Fatalf("convert gguf: code %d\n%s%s", code, out, errOut)
	}
	a, err := gguf.Open(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := gguf.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, ta := range a.Tensors {
		tb := b.Tensor(ta.Name)
		da, _ := ta.Data()
		if tb == nil {
			t.Fatalf("%s missing", ta.Name)
		}
		if db, _ := tb.Data(); !bytes.Equal(da, db) {
			t.Errorf("%s changed", ta.Name)
		}
	}
	if code, _, errOut := trit(t, "convert", "gguf", pack, filepath.Join(dir, "x.gguf"), "--type", "Q1_0"); code != 1 || !strings.Contains(errOut, "allow-lossy") {
		t.Errorf("lossy conversion: code %d, stderr %q", code, errOut)
	}
	if code, out, _ := trit(t, "convert", "gguf", pack, filepath.Join(dir, "y.gguf"), "--type", "Q1_0", "--allow-lossy"); code != 0 || !strings.Contains(out, "changed:") {
		t.Errorf("--allow-lossy: code %d, out %q", code, out)
	}
	if code, _, _ := trit(t, "convert", "gguf", pack, filepath.Join(dir, "z.gguf"), "--type", "Q4_K"); code != 2 {
		t.Errorf("unknown type: code %d, want 2", code)
	}
}
