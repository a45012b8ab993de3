package vision

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/model"
	_ "trit/model/qwen35"
	"trit/quant"
)

func referenceText(t testing.TB) model.Model {
	dir := testdata.Path(t, "reference-vision")
	m, err := model.Load(filepath.Join(dir, "qwen35v-text-f32.gguf"), model.Options{Threads: 2, CacheK: quant.F32, CacheV: quant.F32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// sequenceOf rebuilds a reference's decoder sequence from its text tokens
// and the given image rows.
func sequenceOf(t testing.TB, ref *Dump, e *Embeddings) *Sequence {
	t.Helper()
	var s Sequence
	for _, c := range ref.Chunks {
		switch c.Type {
		case "text":
			s.Text(ref.Tokens[c.Start : c.Start+c.N])
		case "image":
			if err := s.Image(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, p := range ref.Positions {
		if s.Pos[i] != p {
			t.Fatalf("element %d at %v, reference %v", i, s.Pos[i], p)
		}
		if s.Tokens[i] != ref.Tokens[i] && !(s.Tokens[i] == model.EmbedToken && ref.Tokens[i] == -1) {
			t.Fatalf("element %d token %d, reference %d", i, s.Tokens[i], ref.Tokens[i])
		}
	}
	return &s
}

func referenceEmbeddings(ref *Dump) *Embeddings {
	e := &Embeddings{GridX: ref.GridX, GridY: ref.GridY, Dim: ref.NEmbd}
	for _, r := range ref.Embeddings {
		e.Data = append(e.Data, r...)
	}
	return e
}

func maxAbs(ref, got [][]float32) float64 {
	var m float64
	for i := range ref {
		for j := range ref[i] {
			m = max(m, math.Abs(float64(ref[i][j]-got[i][j])))
		}
	}
	return m
}

// TestReferenceTextSide feeds llama.cpp's image embeddings at its positions
// into the text model: every logit within 1e-3 of the reference, in both
// decoding modes, before, inside and after the image. This isolates
// placement, M-RoPE and the position jump after the image.
func TestReferenceTextSide(t *testing.T) {
	m := referenceText(t)
	dir := testdata.Path(t, "reference-vision")
	for _, name := range referenceImages {
		for _, mode := range []string{"batch", "sequential"} {
			t.Run(fmt.Sprintf("%s/%s", name, mode), func(t *testing.T) {
				ref := readDump(t, filepath.Join(dir, name+"."+mode+".json"))
				s := sequenceOf(t, ref, referenceEmbeddings(ref))
				got, err := s.Logits(m, mode)
				if err != nil {
					t.Fatal(err)
				}
				img := ref.Chunks[1]
				for _, part := range []struct {
					name string
					ref  [][]float32
					got  [][]float32
				}{
					{"before the image", ref.LogitsBeforeImage, got[:img.Start]},
					{"image", ref.LogitsImage, got[img.Start : img.Start+img.N]},
					{"after the image", ref.Logits, got[ref.LogitsStart:]},
				} {
					d := maxAbs(part.ref, part.got)
					t.Logf("%s: max |Δ| %.3g", part.name, d)
					if d > 1e-3 {
						t.Errorf("%s: max |Δ| %.3g > 1e-3", part.name, d)
					}
				}
			})
		}
	}
}

// TestReferenceEndToEnd runs trit's preprocessing, tower and text model:
// after the image every logit within 0.06 of llama.cpp's, mean KL ≤ 1e-4,
// top-1 equal at ≥ 19 of 20 positions.
func TestReferenceEndToEnd(t *testing.T) {
	tw, dir := referenceTower(t)
	m := referenceText(t)
	for _, name := range referenceImages {
		for _, mode := range []string{"batch", "sequential"} {
			t.Run(fmt.Sprintf("%s/%s", name, mode), func(t *testing.T) {
				ref := readDump(t, filepath.Join(dir, name+"."+mode+".json"))
				px, err := Preprocess(readPicture(t, filepath.Join(dir, name+".png")), tw.MergedPatch(), tw.Mean(), tw.Std(), Budget{})
				if err != nil {
					t.Fatal(err)
				}
				e, err := tw.Encode(px)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sequenceOf(t, ref, e).Logits(m, mode)
				if err != nil {
					t.Fatal(err)
				}
				a := logitcmp.Compare(ref.Logits, got[ref.LogitsStart:])
				t.Logf("max |Δ| %.3g, mean KL %.3g, top-1 %d/%d", a.MaxAbs, a.MeanKL, a.Top1, len(ref.Logits))
				if a.MaxAbs > 0.06 || a.MeanKL > 1e-4 || a.Top1*20 < 19*len(ref.Logits) {
					t.Errorf("max |Δ| %.3g (≤ 0.06), mean KL %.3g (≤ 1e-4), top-1 %d/%d (≥ 19/20)", a.MaxAbs, a.MeanKL, a.Top1, len(ref.Logits))
				}
			})
		}
	}
}

// TestTextAfterImageContinues: text decoded after an image without
// explicit positions continues from the image's position jump (the state's
// RopeCursor), giving the logits of the fully positioned sequence.
func TestTextAfterImageContinues(t *testing.T) {
	m := referenceText(t)
	dir := testdata.Path(t, "reference-vision")
	ref := readDump(t, filepath.Join(dir, referenceImages[0]+".sequential.json"))
	s := sequenceOf(t, ref, referenceEmbeddings(ref))
	st, err := m.NewState(len(s.Tokens))
	if err != nil {
		t.Fatal(err)
	}
	img := ref.Chunks[1]
	// The prompt up to and including <|vision_end|> carries positions…
	if err := m.Forward([]model.Step{s.Step(st, 0, img.Start+img.N+1)}); err != nil {
		t.Fatal(err)
	}
	// …and the text after it is plain tokens.
	vocab := m.Info().Vocab
	for i := img.Start + img.N + 1; i < len(s.Tokens); i++ {
		lg := make([]float32, vocab)
		if err := m.Forward([]model.Step{{State: st, Tokens: s.Tokens[i : i+1], Logits: lg}}); err != nil {
			t.Fatal(err)
		}
		if d := maxAbs(ref.Logits[i-ref.LogitsStart:][:1], [][]float32{lg}); d > 1e-3 {
			t.Fatalf("element %d: max |Δ| %.3g > 1e-3", i, d)
		}
	}
}
