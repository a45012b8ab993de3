package vision

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"trit/internal/testdata"
	"trit/picture"
)

// referenceImages are the two images of ../shared/testdata/reference-vision.
var referenceImages = []string{"vis-a-64x48", "vis-b-100x80"}

func readDump(t testing.TB, path string) *Dump {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d Dump
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &d
}

func readPicture(t testing.TB, path string) *picture.RGB {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := picture.Decode(b, picture.Limits{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func referenceTower(t testing.TB) (*Tower, string) {
	dir := testdata.Path(t, "reference-vision")
	tw, err := Load(filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	return tw, dir
}

// TestReferencePixels: the resized image equals llama.cpp's byte for byte
// and the normalised floats hash the same.
func TestReferencePixels(t *testing.T) {
	tw, dir := referenceTower(t)
	for _, name := range referenceImages {
		t.Run(name, func(t *testing.T) {
			img := readPicture(t, filepath.Join(dir, name+".png"))
			want := readPicture(t, filepath.Join(dir, name+".resized.png"))
			px, err := Preprocess(img, tw.MergedPatch(), tw.Mean(), tw.Std(), Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if px.Image.W != want.W || px.Image.H != want.H {
				t.Fatalf("resized to %d×%d, want %d×%d", px.Image.W, px.Image.H, want.W, want.H)
			}
			if !bytes.Equal(px.Image.Pix, want.Pix) {
				n := 0
				for i := range want.Pix {
					if px.Image.Pix[i] != want.Pix[i] {
						if n < 5 {
							t.Errorf("byte %d (x %d y %d c %d) = %d, want %d", i, i/3%want.W, i/3/want.W, i%3, px.Image.Pix[i], want.Pix[i])
						}
						n++
					}
				}
				t.Fatalf("%d bytes differ", n)
			}
			ref := readDump(t, filepath.Join(dir, name+".batch.json")).Preprocessed
			got := px.Stats()
			if got.FNV != ref.FNV {
				t.Errorf("fnv1a64 %s, want %s", got.FNV, ref.FNV)
			}
			for i, v := range ref.RowSums {
				if math.Abs(got.RowSums[i]-v) > 1e-4*max(1, math.Abs(v)) {
					t.Errorf("row %d sum %g, want %g", i, got.RowSums[i], v)
				}
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"sum", got.Sum, ref.Sum}, {"sum_abs", got.SumAbs, ref.SumAbs}, {"sum_sq", got.SumSq, ref.SumSq}} {
				if math.Abs(c.got-c.want) > 1e-4*math.Abs(c.want) {
					t.Errorf("%s %g, want %g", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestReferenceEmbeddings: the tower's rows are within the README's
// bounds of llama.cpp's: max |e − r| ≤ 2e-3·max |r| and rms(e − r) ≤
// 1e-3·rms(r).
func TestReferenceEmbeddings(t *testing.T) {
	tw, dir := referenceTower(t)
	for _, name := range referenceImages {
		t.Run(name, func(t *testing.T) {
			ref := readDump(t, filepath.Join(dir, name+".batch.json"))
			px, err := Preprocess(readPicture(t, filepath.Join(dir, name+".png")), tw.MergedPatch(), tw.Mean(), tw.Std(), Budget{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := tw.Encode(px)
			if err != nil {
				t.Fatal(err)
			}
			if e.GridX != ref.GridX || e.GridY != ref.GridY || e.Dim != ref.NEmbd {
				t.Fatalf("grid %d×%d of %d, want %d×%d of %d", e.GridX, e.GridY, e.Dim, ref.GridX, ref.GridY, ref.NEmbd)
			}
			maxErr, maxRef, rmsErr, rmsRef := compareRows(ref.Embeddings, e)
			t.Logf("max |e−r| %.3g (%.3g·max|r|), rms %.3g·rms(r)", maxErr, maxErr/maxRef, rmsErr/rmsRef)
			if maxErr > 2e-3*maxRef || rmsErr > 1e-3*rmsRef {
				t.Errorf("max |e−r| %.3g > 2e-3·%.3g or rms %.3g > 1e-3·%.3g", maxErr, maxRef, rmsErr, rmsRef)
			}
		})
	}
}

func compareRows(ref [][]float32, e *Embeddings) (maxErr, maxRef, rmsErr, rmsRef float64) {
	var n int
	for i, row := range ref {
		for j, r := range row {
			d := float64(e.Row(i)[j] - r)
			maxErr = max(maxErr, math.Abs(d))
			maxRef = max(maxRef, math.Abs(float64(r)))
			rmsErr += d * d
			rmsRef += float64(r) * float64(r)
			n++
		}
	}
	return maxErr, maxRef, math.Sqrt(rmsErr / float64(n)), math.Sqrt(rmsRef / float64(n))
}
