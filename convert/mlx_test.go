package convert_test

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"trit/convert"
	"trit/gguf"
	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/model"
	"trit/model/checkpoint"
	_ "trit/model/llama"
	_ "trit/model/qwen35"
	"trit/quant"
)

// ternaryStems are the reference files whose matrices are all in one
// ternary layout.
var ternaryStems = []string{
	"qwen3-tern-Q2_0", "qwen3-tern-Q2_0g128", "qwen3-tern-TQ1_0", "qwen3-tern-TQ2_0", "qwen3-tern-Q1_0",
	"qwen35-tern-Q2_0", "qwen35-tern-Q2_0g128", "qwen35-tern-TQ1_0", "qwen35-tern-TQ2_0", "qwen35-tern-Q1_0",
}

func openGGUF(t testing.TB, path string) model.Source {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return model.FromGGUF(f)
}

// ternaryType is the layout of the file's ternary tensors.
func ternaryType(t testing.TB, src model.Source) *quant.Format {
	for _, tn := range src.Tensors() {
		if tn.Format.Ternary {
			return tn.Format
		}
	}
	t.Fatal("no ternary tensor")
	return nil
}

// sameTensors checks that b holds every tensor of a with identical dims,
// format and bytes.
func sameTensors(t *testing.T, a, b model.Source) {
	t.Helper()
	if len(a.Tensors()) != len(b.Tensors()) {
		t.Errorf("%d tensors, want %d", len(b.Tensors()), len(a.Tensors()))
	}
	for _, ta := range a.Tensors() {
		tb := b.Tensor(ta.Name)
		if tb == nil {
			t.Errorf("%s missing", ta.Name)
			continue
		}
		da, _ := ta.Data()
		db, err := tb.Data()
		if err != nil {
			t.Fatal(err)
		}
		if tb.Format != ta.Format || !slices.Equal(ta.Dims, tb.Dims) || !bytes.Equal(da, db) {
			t.Errorf("%s: %s %v (%d bytes), want %s %v (%d bytes), bytes equal %v", ta.Name, tb.Format, tb.Dims, len(db), ta.Format, ta.Dims, len(da), bytes.Equal(da, db))
		}
	}
}

// TestMLXRoundTrip converts every ternary reference file (and PQ2_0 and
// PTQ1_0 transcodes of the group-128 ones) to an MLX pack and back into
// its own layout, and checks that every tensor comes back byte for byte.
func TestMLXRoundTrip(t *testing.T) {
	dir := testdata.Path(t, "reference")
	files := map[string]string{}
	for _, stem := range ternaryStems {
		files[stem] = filepath.Join(dir, stem+".gguf")
	}
	// PQ2_0 and PTQ1_0 files, transcoded from the group-128 references.
	tmp := t.TempDir()
	for _, base := range []string{"qwen3-tern", "qwen35-tern"} {
		g128 := openGGUF(t, filepath.Join(dir, base+"-Q2_0g128.gguf"))
		for _, typ := range []*quant.Format{quant.PQ2_0, quant.PTQ1_0} {
			p := filepath.Join(tmp, base+"-"+typ.Name+".gguf")
			if _, err := convert.ToGGUF(g128, p, typ, convert.Options{}); err != nil {
				t.Fatal(err)
			}
			files[base+"-"+typ.Name] = p
		}
		g128.Close()
	}
	for stem, path := range files {
		t.Run(stem, func(t *testing.T) {
			src := openGGUF(t, path)
			defer src.Close()
			pack := filepath.Join(t.TempDir(), "pack")
			rep, err := convert.ToMLX(src, pack, convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Lossy) > 0 {
				t.Errorf("lossless conversion reports changes: %v", rep.Lossy)
			}
			mlx, err := checkpoint.Open(pack)
			if err != nil {
				t.Fatal(err)
			}
			defer mlx.Close()
			out := filepath.Join(t.TempDir(), "back.gguf")
			if _, err := convert.ToGGUF(mlx, out, ternaryType(t, src), convert.Options{}); err != nil {
				t.Fatal(err)
			}
			back := openGGUF(t, out)
			defer back.Close()
			sameTensors(t, src, back)
		})
	}
}

// TestMLXLogits loads the MLX packs of ternary reference files directly
// and checks their logits against the GGUF file's: on exactly dequantized
// weights always (the pack holds the same values), and on the packed
// kernels where the pack's layout and order are the file's own (same
// bytes, same kernel: the same floats). A qwen35 pack keeps its value
// heads in HF's grouped order, so ssm_out's SIMD chunks sum heads in
// another association than the tiled GGUF; on these chaotic random models
// that last-bit difference flips an int8 activation rounding within a few
// positions (measured: 0.2 at position 5 of 16, with the pack agreeing
// with the GGUF's own batch run), so qwen35 is compared on the exact path
// only.
func TestMLXLogits(t *testing.T) {
	dir := testdata.Path(t, "reference")
	ids := logitcmp.Read(t, filepath.Join(dir, "qwen3-f32.batch.json")).IDs[:16]
	for _, stem := range []string{"qwen3-tern-Q2_0g128", "qwen3-tern-TQ2_0", "qwen3-tern-Q1_0", "qwen35-tern-Q2_0g128", "qwen35-tern-Q2_0", "qwen35-tern-TQ1_0"} {
		t.Run(stem, func(t *testing.T) {
			path := filepath.Join(dir, stem+".gguf")
			src := openGGUF(t, path)
			pack := filepath.Join(t.TempDir(), "pack")
			_, err := convert.ToMLX(src, pack, convert.Options{})
			typ := ternaryType(t, src)
			src.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, exact := range []bool{true, false} {
				if !exact && (strings.HasPrefix(stem, "qwen35") || (typ != quant.Q2_0 && typ != quant.Q2_0g64 && typ != quant.Q1_0)) {
					continue // see above; or the pack runs as PQ2_0, another kernel than the file's
				}
				opts := model.Options{Threads: 2, Exact: exact, CacheK: quant.F32, CacheV: quant.F32}
				g, err := model.Load(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := checkpoint.Open(pack)
				if err != nil {
					t.Fatal(err)
				}
				m, err := model.FromSource(ms, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, mode := range []string{"batch", "sequential"} {
					want, err := model.ComputeLogits(g, ids, mode)
					if err != nil {
						t.Fatal(err)
					}
					got, err := model.ComputeLogits(m, ids, mode)
					if err != nil {
						t.Fatal(err)
					}
					a := logitcmp.Compare(want.Logits, got.Logits)
					if a.MaxAbs > 1e-5 || math.IsNaN(a.MaxAbs) {
						t.Errorf("exact %v, %s: max |Δ| %g > 1e-5", exact, mode, a.MaxAbs)
					}
				}
				g.Close()
				m.Close()
			}
		})
	}
}

// TestMLXOtherLayouts converts a group-128 pack into every ternary layout
// and checks the result against transcoding the file directly; layouts
// that cannot hold the values are refused.
func TestMLXOtherLayouts(t *testing.T) {
	dir := testdata.Path(t, "reference")
	src := openGGUF(t, filepath.Join(dir, "qwen3-tern-Q2_0g128.gguf"))
	defer src.Close()
	pack := filepath.Join(t.TempDir(), "pack")
	if _, err := convert.ToMLX(src, pack, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	mlx, err := checkpoint.Open(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer mlx.Close()
	for _, typ := range []*quant.Format{quant.PQ2_0, quant.PTQ1_0, quant.Q2_0g64, quant.TQ2_0, quant.TQ1_0, quant.Q1_0} {
		t.Run(typ.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x.gguf")
			_, err := convert.ToGGUF(mlx, out, typ, convert.Options{})
			for _, tn := range src.Tensors() {
				if !tn.Format.Ternary {
					continue
				}
				data, _ := tn.Data()
				_, terr := quant.Transcode(typ, tn.Format, data, int(tn.Dims[0]))
				if terr != nil {
					if !errors.Is(err, convert.ErrLossy) {
						t.Fatalf("%s cannot be transcoded (%v), but the conversion gave %v", tn.Name, terr, err)
					}
					return
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			back := openGGUF(t, out)
			defer back.Close()
			for _, tn := range src.Tensors() {
				want, _ := tn.Data()
				if tn.Format.Ternary {
					want, _ = quant.Transcode(typ, tn.Format, want, int(tn.Dims[0]))
				}
				got, _ := back.Tensor(tn.Name).Data()
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the direct transcode", tn.Name)
				}
			}
			if _, err := convert.ToGGUF(mlx, filepath.Join(t.TempDir(), "y.gguf"), typ, convert.Options{AllowLossy: true}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
