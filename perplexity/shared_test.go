package perplexity_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trit/convert"
	"trit/gguf"
	"trit/internal/logitcmp"
	"trit/internal/testdata"
	"trit/logprob"
	"trit/model"
	_ "trit/model/llama"
	_ "trit/model/qwen35"
	"trit/perplexity"
	"trit/tokenizer"
)

// llama-perplexity on stories260K (converted by llama.cpp's own tools) for
// the first 20,000 bytes of WikiText-2's test split at -c 128.
const llamaCppPPL, llamaCppErr = 112.5422, 5.778

func TestStories260KMatchesLlamaCpp(t *testing.T) {
	dir := testdata.Path(t, "llama2c")
	text, err := os.ReadFile(testdata.Path(t, "wikitext-2", "wiki.test.raw"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := convert.Llama2CFile(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"), path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromFile(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ids := tok.Encode(strings.TrimSuffix(string(text[:20000]), "\n"), tokenizer.EncodeOptions{AddBOS: true})
	res, err := perplexity.Run(m, ids, perplexity.Options{Ctx: 128, BOS: tok.BOS()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PPL = %.4f ± %.4f over %d chunks, %d tokens scored (llama-perplexity: %.4f ± %.3f)", res.PPL, res.Err, res.Chunks, res.Scored, llamaCppPPL, llamaCppErr)
	if d := math.Abs(res.PPL-llamaCppPPL) / llamaCppPPL; d > 0.005 {
		t.Errorf("PPL %.4f is %.2f %% from llama-perplexity's %.4f (allowed 0.5 %%)", res.PPL, 100*d, llamaCppPPL)
	}
	// The error is given to 4 digits; the same chunking gives the same count.
	if d := math.Abs(res.Err-llamaCppErr) / llamaCppErr; d > 0.005 || res.Scored != 96*63 {
		t.Errorf("error %.4f (llama-perplexity %.3f), %d tokens scored (96 chunks × 63)", res.Err, llamaCppErr, res.Scored)
	}
}

// meanKL is the mean KL(base ‖ q) over rows [from, to) of logits, with
// base's whole distributions, by perplexity's own per-position KL.
func meanKL(base, q [][]float32, from, to int) float64 {
	var s float64
	for i := from; i < to; i++ {
		lb := logprob.LogSumExp(base[i])
		rec := perplexity.Record{Top: logprob.Top(nil, base[i], len(base[i]), lb)}
		kl, _ := perplexity.PositionKL(&rec, q[i], logprob.LogSumExp(q[i]))
		s += kl
	}
	return s / float64(to-from)
}

// What `trit perplexity --kl-base` reports for each reference pack against
// its f32 base, over the 40 reference ids as one chunk, matches the KL
// between llama.cpp's logits for the same files at the same positions
// (the second half of the chunk) within 10 %. qwen3-tern's distributions
// are one-hot (README: "useless for KL"), so most of its packs give KL at
// the float32 noise floor on both sides (≤ 1e-6): there both must stay
// under it.
func TestReferencePackKL(t *testing.T) {
	dir := testdata.Path(t, "reference")
	for _, stem := range []string{"qwen3-tern", "qwen35-tern"} {
		refBase := logitcmp.Read(t, filepath.Join(dir, stem+"-f32.batch.json"))
		ids := refBase.IDs
		ctx := len(ids)
		basePath := filepath.Join(t.TempDir(), stem+".base")
		save(t, filepath.Join(dir, stem+"-f32.gguf"), ids, basePath)
		packs, _ := filepath.Glob(filepath.Join(dir, stem+"-*.gguf"))
		for _, pack := range packs {
			name := strings.TrimSuffix(filepath.Base(pack), ".gguf")
			if strings.HasSuffix(name, "-f32") {
				continue
			}
			t.Run(name, func(t *testing.T) {
				ref := logitcmp.Read(t, filepath.Join(dir, name+".batch.json"))
				want := meanKL(refBase.Logits, ref.Logits, ctx/2, ctx-1)
				k := compare(t, pack, basePath)
				t.Logf("KL %.4g (llama.cpp's logits: %.4g, ratio %.3f), median %.3g, max %.3g, same top %.0f %%, ΔPPL %.4g",
					k.Mean, want, k.Mean/want, k.Median, k.Max, 100*k.SameTop, k.Diff)
				if k.Positions != perplexity.Scored(ctx) {
					t.Errorf("%d positions, want %d", k.Positions, perplexity.Scored(ctx))
				}
				if noise := 1e-6; want <= noise && k.Mean <= noise {
					return
				}
				if r := k.Mean / want; r < 0.9 || r > 1.1 {
					t.Errorf("KL %.4g, llama.cpp's %.4g: ratio %.3f outside 0.9…1.1", k.Mean, want, r)
				}
			})
		}
	}
}

// save runs the model at path over ids as one chunk and saves its whole
// distributions to out.
func save(t *testing.T, path string, ids []int, out string) {
	t.Helper()
	m := logitcmp.Load(t, path, false)
	o := perplexity.Options{Ctx: len(ids), BOS: -1, TopK: m.Info().Vocab}
	h, err := perplexity.NewHeader(m.Info().Vocab, ids, o)
	if err != nil {
		t.Fatal(err)
	}
	if o.Save, err = perplexity.Create(out, h); err != nil {
		t.Fatal(err)
	}
	if _, err := perplexity.Run(m, ids, o); err != nil {
		t.Fatal(err)
	}
	if err := o.Save.Close(); err != nil {
		t.Fatal(err)
	}
}

// compare runs the model at path against the base file.
func compare(t *testing.T, path, base string) *perplexity.KL {
	t.Helper()
	r, err := perplexity.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := perplexity.Run(logitcmp.Load(t, path, false), nil, perplexity.Options{Base: r, BOS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return res.KL
}
