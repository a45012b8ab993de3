package vision

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"trit/gguf"
	"trit/internal/testdata"
	"trit/model"
	"trit/picture"
	"trit/tokenizer"
)

func referenceTokenizer(t testing.TB) *tokenizer.Tokenizer {
	dir := testdata.Path(t, "reference-vision")
	f, err := gguf.Open(filepath.Join(dir, "qwen35v-text-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBuildSequence: the reference prompt tokenizes to the reference's
// decoder sequence, markers and images must agree, and the prefix keys of
// two images differ exactly from the first image row on.
func TestBuildSequence(t *testing.T) {
	tw, dir := referenceTower(t)
	tok := referenceTokenizer(t)
	ref := readDump(t, filepath.Join(dir, "vis-a-64x48.batch.json"))
	data, err := os.ReadFile(filepath.Join(dir, "vis-a-64x48.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := tw.EncodeImage(data, picture.Limits{}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	opts := tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true}
	s, err := BuildSequence(tok, ref.Prompt.Before+Marker+ref.Prompt.After, []*Image{img}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Tokens, ref.Tokens) {
		t.Fatalf("tokens %v\nwant   %v", s.Tokens, ref.Tokens)
	}
	if !slices.Equal(s.Pos, ref.Positions) {
		t.Fatalf("positions %v\nwant      %v", s.Pos, ref.Positions)
	}
	if !slices.Equal(s.Chunks, ref.Chunks) {
		t.Fatalf("chunks %v, want %v", s.Chunks, ref.Chunks)
	}
	if _, err := BuildSequence(tok, "a"+Marker+"b"+Marker, []*Image{img}, opts); !errors.Is(err, ErrMarkers) {
		t.Errorf("two markers, one image: %v, want ErrMarkers", err)
	}
	// Without a marker the image goes first.
	s2, err := BuildSequence(tok, "hello", []*Image{img}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Tokens[0] != 515 || s2.Tokens[1] != model.EmbedToken {
		t.Errorf("unmarked prompt starts %v, want <|vision_start|> and the image", s2.Tokens[:3])
	}
	other := *img
	other.Hash++
	s3, err := BuildSequence(tok, ref.Prompt.Before+Marker+ref.Prompt.After, []*Image{&other}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := model.CommonPrefix(s.Keys(), s3.Keys()); got != ref.Chunks[1].Start {
		t.Errorf("common prefix of two images' sequences %d, want %d (up to the image)", got, ref.Chunks[1].Start)
	}
	if got := model.CommonPrefix(s.Keys(), s.Keys()); got != len(s.Tokens) {
		t.Errorf("common prefix with itself %d, want %d", got, len(s.Tokens))
	}
}

// TestLazy: the tower is not resident until used, and is released after
// the idle time.
func TestLazy(t *testing.T) {
	dir := testdata.Path(t, "reference-vision")
	l, err := NewLazy(filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), Options{Threads: 1}, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Resident() != 0 || l.Loads() != 0 {
		t.Fatalf("resident %d bytes, %d loads before any image", l.Resident(), l.Loads())
	}
	if err := l.Use(func(*Tower) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if l.Resident() == 0 || l.Loads() != 1 {
		t.Fatalf("resident %d bytes, %d loads after an image", l.Resident(), l.Loads())
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.Resident() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the tower was not released after its idle time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := l.Use(func(*Tower) error { return nil }); err != nil || l.Loads() != 2 {
		t.Fatalf("reload: %v, %d loads", err, l.Loads())
	}
	if _, err := NewLazy(filepath.Join(dir, "qwen35v-text-f32.gguf"), Options{}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a text model as mmproj: %v, want ErrUnsupported", err)
	}
}
