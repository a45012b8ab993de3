package main

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/vision"
)

const visionPrompt = "<|im_start|>user\n<__media__>Describe this image.<|im_end|>\n<|im_start|>assistant\n"

func decodeDump(t *testing.T, s string) *vision.Dump {
	t.Helper()
	var d vision.Dump
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("%v in %.200q", err, s)
	}
	return &d
}

// TestLogitsImage: `trit logits --image --json` prints the reference
// layout, whose pixels hash like llama.cpp's and whose logits meet the
// README's end-to-end criteria; --embeddings-in with the reference's own
// embeddings reproduces its logits within 1e-3.
func TestLogitsImage(t *testing.T) {
	dir := testdata.Path(t, "reference-vision")
	text := filepath.Join(dir, "qwen35v-text-f32.gguf")
	for _, name := range []string{"vis-a-64x48", "vis-b-100x80"} {
		refPath := filepath.Join(dir, name+".batch.json")
		b, err := os.ReadFile(refPath)
		if err != nil {
			t.Fatal(err)
		}
		var ref vision.Dump
		if err := json.Unmarshal(b, &ref); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := trit(t, "logits", "-m", text, "--mmproj", filepath.Join(dir, "mmproj-qwen35v-f32.gguf"),
			"--image", filepath.Join(dir, name+".png"), "--prompt", visionPrompt, "--json", "-t", "2")
		if code != 0 {
			t.Fatalf("%s: code %d: %s", name, code, errOut)
		}
		got := decodeDump(t, out)
		if got.Preprocessed == nil || got.Preprocessed.FNV != ref.Preprocessed.FNV {
			t.Errorf("%s: preprocessed %+v, want fnv %s", name, got.Preprocessed, ref.Preprocessed.FNV)
		}
		if got.Format != vision.DumpFormat || got.LogitsStart != ref.LogitsStart || got.NSeq != ref.NSeq || got.ImageWidth != ref.ImageWidth || got.Prompt != ref.Prompt {
			t.Errorf("%s: layout differs: %q start %d n_seq %d width %d prompt %q", name, got.Format, got.LogitsStart, got.NSeq, got.ImageWidth, got.Prompt)
		}
		a := logitcmp.Compare(ref.Logits, got.Logits)
		if a.MaxAbs > 0.06 || a.MeanKL > 1e-4 || a.Top1 < 19 {
			t.Errorf("%s: end to end: max %.3g, mean KL %.3g, top-1 %d", name, a.MaxAbs, a.MeanKL, a.Top1)
		}
		code, out, errOut = trit(t, "logits", "-m", text, "--embeddings-in", refPath, "--prompt", visionPrompt, "--json")
		if code != 0 {
			t.Fatalf("%s --embeddings-in: code %d: %s", name, code, errOut)
		}
		got = decodeDump(t, out)
		if a := logitcmp.Compare(ref.Logits, got.Logits); a.MaxAbs > 1e-3 {
			t.Errorf("%s --embeddings-in: max |Δ| %.3g > 1e-3", name, a.MaxAbs)
		}
	}
}

// TestImageErrors: bad images and missing towers are CLI errors that say
// what is wrong.
func TestImageErrors(t *testing.T) {
	dir := testdata.Path(t, "reference-vision")
	text := filepath.Join(dir, "qwen35v-text-f32.gguf")
	mmproj := filepath.Join(dir, "mmproj-qwen35v-f32.gguf")
	good := filepath.Join(dir, "vis-a-64x48.png")
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	png, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bomb := append([]byte(nil), png[:33]...)                  // signature + IHDR…
	bomb[16], bomb[17], bomb[18], bomb[19] = 0, 0, 0xc3, 0x50 // width 50000
	bomb[20], bomb[21], bomb[22], bomb[23] = 0, 0, 0xc3, 0x50 // height 50000
	binary.BigEndian.PutUint32(bomb[29:], crc32.ChecksumIEEE(bomb[12:29]))
	bomb = append(bomb, make([]byte, 64<<10)...)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no mmproj", []string{"run", "-m", text, "--image", good, "-p", "hi"}, "start with --mmproj"},
		{"logits without mmproj", []string{"logits", "-m", text, "--image", good, "--prompt", "hi"}, "start with --mmproj"},
		{"missing file", []string{"run", "-m", text, "--mmproj", mmproj, "--image", filepath.Join(tmp, "none.png"), "-p", "hi"}, "no such file"},
		{"truncated", []string{"run", "-m", text, "--mmproj", mmproj, "--image", write("t.png", png[:len(png)/2]), "-p", "hi"}, "picture: png"},
		{"unsupported", []string{"run", "-m", text, "--mmproj", mmproj, "--image", write("x.bmp", []byte("BM not an image")), "-p", "hi"}, "unsupported image format"},
		{"bomb", []string{"run", "-m", text, "--mmproj", mmproj, "--image", write("b.png", bomb), "-p", "hi"}, "50000×50000 pixels exceeds the limit"},
		{"too many", []string{"run", "-m", text, "--mmproj", mmproj, "--image-max-count", "1", "--image", good, "--image", good, "-p", "hi"}, "at most 1"},
		{"too big", []string{"run", "-m", text, "--mmproj", mmproj, "--image-max-bytes", "100", "--image", good, "-p", "hi"}, "too large"},
		{"markers", []string{"run", "-m", text, "--mmproj", mmproj, "--image", good, "-p", "<__media__><__media__>"}, "markers"},
		{"text model as mmproj", []string{"run", "-m", text, "--mmproj", text, "--image", good, "-p", "hi"}, "unsupported mmproj"},
		{"bad budget", []string{"run", "-m", text, "--mmproj", mmproj, "--image-min-tokens", "100", "--image-max-tokens", "10", "--image", good, "-p", "hi"}, "token budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := trit(t, tt.args...)
			if code == 0 || !strings.Contains(errOut, tt.want) {
				t.Errorf("code %d, stderr %q: want an error containing %q", code, errOut, tt.want)
			}
		})
	}
}

// TestChatImage: /image attaches images to the next message; without a
// tower it is refused with the reason, and the chat goes on.
func TestChatImage(t *testing.T) {
	dir := testdata.Path(t, "reference-vision")
	text := filepath.Join(dir, "qwen35v-text-f32.gguf")
	a, b := filepath.Join(dir, "vis-a-64x48.png"), filepath.Join(dir, "vis-b-100x80.png")
	in := strings.NewReader("/image " + a + "\nDescribe\n/image " + b + "\n/image " + a + "\nAnd these?\n/image /no/such.png\n/exit\n")
	var o, e strings.Builder
	if err := chatLoop([]string{"-m", text, "--mmproj", filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), "-n", "4", "--temp", "0"}, in, &o, &e, false); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	if n := strings.Count(o.String(), "(image attached"); n != 3 {
		t.Errorf("%d images attached, want 3:\n%s", n, o.String())
	}
	if !strings.Contains(o.String(), "(image not attached:") {
		t.Errorf("a missing file was not reported:\n%s", o.String())
	}
	if n := strings.Count(e.String(), "generated at"); n != 2 {
		t.Errorf("%d answers, want 2:\n%s", n, e.String())
	}
	in = strings.NewReader("/image " + a + "\n/exit\n")
	o.Reset()
	if err := chatLoop([]string{"-m", text}, in, &o, &e, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.String(), "start with --mmproj") {
		t.Errorf("/image without a tower: %q", o.String())
	}
}
