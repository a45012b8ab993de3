package vision

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"trit/gguf"
	"trit/internal/testdata"
	"trit/quant"
)

// convertTower writes the reference mmproj with its matrices (the 2-D
// weights the kernels multiply by) re-encoded in format f.
func convertTower(t testing.TB, src, dst string, f *quant.Format) { rewriteTower(t, src, dst, f, nil) }

// rewriteTower copies the mmproj src to dst, its matrices re-encoded in f
// (nil: kept), with the keys of set added or replacing the file's own.
func rewriteTower(t testing.TB, src, dst string, f *quant.Format, set map[string]gguf.Value) {
	t.Helper()
	in, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	w := gguf.NewWriter()
	for _, kv := range in.KV {
		if _, ok := set[kv.Key]; ok {
			continue
		}
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := w.AddKV(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range in.Tensors {
		data, err := tn.Data()
		if err != nil {
			t.Fatal(err)
		}
		format := tn.Format
		if f != nil && len(tn.Dims) == 2 && strings.HasSuffix(tn.Name, ".weight") && tn.Name != "v.position_embd.weight" {
			vals := make([]float32, tn.Elems())
			if err := tn.Format.Decode(vals, data); err != nil {
				t.Fatal(err)
			}
			size, err := f.RowBytes(tn.Elems())
			if err != nil {
				t.Fatal(err)
			}
			data = make([]byte, size)
			if err := f.Encode(data, vals); err != nil {
				t.Fatal(err)
			}
			format = f
		}
		if err := w.AddTensor(tn.Name, format, slices.Clone(tn.Dims), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
}

// TestWeightFormats runs the reference tower with its matrices in F16,
// BF16 and Q8_0 through the packed kernels and compares with the F32
// tower. Bounds: a matrix product with weights rounded to relative step u
// moves its output by about u/√3 (rms, relative), activations quantized
// alike add as much again; ten products in series (four per block, two in
// the merger) grow that by √10. F16 (u = 2⁻¹¹) gives 1.3e-3, BF16
// (u = 2⁻⁸) 1.0e-2, Q8_0 (step max/127 over blocks of 32 Gaussians,
// relative ≈ 2.5/127) 2.5e-2; the bounds are twice those.
func TestWeightFormats(t *testing.T) {
	ref, dir := referenceTower(t)
	px, err := Preprocess(readPicture(t, filepath.Join(dir, "vis-a-64x48.png")), ref.MergedPatch(), ref.Mean(), ref.Std(), Budget{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Encode(px)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f     *quant.Format
		bound float64
	}{{quant.F16, 2.6e-3}, {quant.BF16, 2e-2}, {quant.Q8_0, 5e-2}} {
		t.Run(tt.f.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mmproj.gguf")
			convertTower(t, filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), path, tt.f)
			tw, err := Load(path, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			if got := tw.blocks[0].qkv.M.Format; got != tt.f {
				t.Fatalf("attn_qkv in %v, want %v", got, tt.f)
			}
			got, err := tw.Encode(px)
			if err != nil {
				t.Fatal(err)
			}
			var wantRows [][]float32
			for i := range want.N() {
				wantRows = append(wantRows, want.Row(i))
			}
			_, _, rmsErr, rmsRef := compareRows(wantRows, got)
			t.Logf("rms(e − e_f32) = %.3g·rms", rmsErr/rmsRef)
			if rmsErr > tt.bound*rmsRef {
				t.Errorf("rms %.3g·rms(r) > %.3g", rmsErr/rmsRef, tt.bound)
			}
		})
	}
}

// TestEncodeThreads: the embeddings do not depend on the thread count.
func TestEncodeThreads(t *testing.T) {
	dir := testdata.Path(t, "reference-vision")
	var first *Embeddings
	for _, n := range []int{1, 2, 3, 5} {
		tw, err := Load(filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), Options{Threads: n})
		if err != nil {
			t.Fatal(err)
		}
		px, err := Preprocess(readPicture(t, filepath.Join(dir, "vis-b-100x80.png")), tw.MergedPatch(), tw.Mean(), tw.Std(), Budget{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := tw.Encode(px)
		tw.Close()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = e
			continue
		}
		for i, v := range e.Data {
			if v != first.Data[i] && !(math.IsNaN(float64(v)) && math.IsNaN(float64(first.Data[i]))) {
				t.Fatalf("%d threads: element %d = %g, 1 thread %g", n, i, v, first.Data[i])
			}
		}
	}
}
