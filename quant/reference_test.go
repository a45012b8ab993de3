package quant_test

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"trit/internal/testdata"

	"trit/gguf"
	"trit/quant"
)

// tensor is one tensor of a reference file, decoded.
type tensor struct {
	format *quant.Format
	rowLen int
	data   []byte
	values []float32
}

// load decodes every tensor of a GGUF file with the reference decoders and
// checks that the values are finite.
func load(t *testing.T, path string) map[string]*tensor {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	out := map[string]*tensor{}
	for _, ti := range f.Tensors {
		data, err := ti.Data()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, ti.Name, err)
		}
		values, err := quant.Dequantize(ti.Format, data, ti.Elems())
		if err != nil {
			t.Fatalf("%s: %s: %v", path, ti.Name, err)
		}
		for i, v := range values {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: %s: element %d is %v", filepath.Base(path), ti.Name, i, v)
			}
		}
		out[ti.Name] = &tensor{format: ti.Format, rowLen: int(ti.Dims[0]), data: data, values: values}
	}
	return out
}

// maxRelError bounds ‖decoded − f32‖/‖f32‖ per tensor for the formats that
// are lossy on ternary weights with one scale per 128 values. The largest
// measured values: Q8_0 0.0003, Q4_K 0.004, Q6_K 0.005, Q4_0 0.09 (the
// sign opposite the block maximum saturates at 7/8), TQ1_0 and TQ2_0 0.33
// (one scale per 256), Q1_0 0.60 (zeros become ±d).
var maxRelError = map[*quant.Format]float64{
	quant.Q8_0:  0.002,
	quant.Q4_K:  0.01,
	quant.Q6_K:  0.01,
	quant.Q4_0:  0.12,
	quant.TQ1_0: 0.45,
	quant.TQ2_0: 0.45,
	quant.Q1_0:  0.75,
}

// TestReferenceFiles decodes every reference GGUF and compares each
// quantized *-tern-* file with the *-tern-f32 file it was made from:
// bit-exact where the format is lossless for these weights (Q2_0 in both
// group sizes, and the F32 tensors), close elsewhere. It also re-quantizes
// the f32 weights with the reference encoders, which must reproduce the
// bytes llama-quantize wrote.
func TestReferenceFiles(t *testing.T) {
	dir := testdata.Path(t, "reference")
	paths, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no GGUF files in %s (%v)", dir, err)
	}
	f32 := map[string]map[string]*tensor{}
	for _, stem := range []string{"qwen3", "qwen35"} {
		f32[stem] = load(t, filepath.Join(dir, stem+"-tern-f32.gguf"))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".gguf")
		stem, _, ok := strings.Cut(name, "-tern-")
		if !ok || strings.HasSuffix(name, "-f32") {
			load(t, path) // decoding and finiteness only
			continue
		}
		t.Run(name, func(t *testing.T) {
			ref := f32[stem]
			encoded := 0
			for tn, q := range load(t, path) {
				w := ref[tn]
				if w == nil || len(w.values) != len(q.values) {
					t.Errorf("%s: no f32 counterpart of the same size", tn)
					continue
				}
				switch q.format {
				case quant.F32, quant.Q2_0, quant.Q2_0g64:
					for i := range q.values {
						if math.Float32bits(q.values[i]) != math.Float32bits(w.values[i]) {
							t.Errorf("%s (%s): element %d = %g, f32 file has %g", tn, q.format, i, q.values[i], w.values[i])
							break
						}
					}
				default:
					if e := relError(q.values, w.values); e > maxRelError[q.format] {
						t.Errorf("%s (%s): relative error %.4f > %.4f", tn, q.format, e, maxRelError[q.format])
					}
				}
				if q.format == quant.F32 || (testing.Short() && encoded >= 4) {
					continue
				}
				encoded++
				got := make([]byte, len(q.data))
				if err := q.format.Encode(got, w.values); err != nil {
					t.Fatalf("%s: %v", tn, err)
				}
				if !bytes.Equal(got, q.data) {
					b := firstDiff(got, q.data) / q.format.BlockBytes
					t.Errorf("%s (%s): re-quantized bytes differ from the file's, first in block %d", tn, q.format, b)
				}
			}
		})
	}
}

func relError(got, want []float32) float64 {
	var num, den float64
	for i := range got {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// TestReferenceTranscode carries every ternary tensor of the reference
// Q2_0 (group 64), TQ2_0, TQ1_0 and Q1_0 files through Prism's layouts
// (Q2_0 group 128, PQ2_0, PTQ1_0) and back: the values must not change and
// the original bytes must come back.
func TestReferenceTranscode(t *testing.T) {
	dir := testdata.Path(t, "reference")
	for _, stem := range []string{"qwen3", "qwen35"} {
		for _, kind := range []string{"Q2_0", "TQ2_0", "TQ1_0", "Q1_0"} {
			name := stem + "-tern-" + kind
			t.Run(name, func(t *testing.T) {
				n := 0
				for tn, src := range load(t, filepath.Join(dir, name+".gguf")) {
					if !src.format.Ternary {
						continue
					}
					n++
					for _, mid := range []*quant.Format{quant.Q2_0, quant.PQ2_0, quant.PTQ1_0} {
						out, err := quant.Transcode(mid, src.format, src.data, src.rowLen)
						if err != nil {
							t.Errorf("%s: %v", tn, err)
							continue
						}
						got, err := quant.Dequantize(mid, out, int64(len(src.values)))
						if err != nil {
							t.Fatal(err)
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(src.values[i]) {
								t.Errorf("%s → %s: element %d = %g, want %g", tn, mid, i, got[i], src.values[i])
								break
							}
						}
						back, err := quant.Transcode(src.format, mid, out, src.rowLen)
						if err != nil {
							t.Errorf("%s: %s → %s → %s: %v", tn, src.format, mid, src.format, err)
							continue
						}
						if !bytes.Equal(back, src.data) {
							t.Errorf("%s: %s → %s → %s changed the bytes", tn, src.format, mid, src.format)
						}
					}
				}
				if n == 0 {
					t.Errorf("no ternary tensors in %s", name)
				}
			})
		}
	}
}
