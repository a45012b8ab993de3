package convert_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"trit/convert"
	"trit/engine"
	"trit/gguf"
	"trit/internal/testdata"
	"trit/model"
	_ "trit/model/llama"
	"trit/sample"
	"trit/tokenizer"
)

// readIDs parses a tokens_*.ids file: lines "prompt ID..." and "all ID...".
func readIDs(t *testing.T, path string) (prompt, all []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		var ids []int
		for _, s := range f[1:] {
			v, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			ids = append(ids, v)
		}
		switch f[0] {
		case "prompt":
			prompt = ids
		case "all":
			all = ids
		}
	}
	return prompt, all
}

// TestStories260KGoldens converts llama2.c's stories260K and checks that
// greedy generation reproduces run.c's outputs byte for byte, prompt
// included, and the token streams behind them.
func TestStories260KGoldens(t *testing.T) {
	dir := testdata.Path(t, "llama2c")
	out := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := convert.Llama2CFile(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"), out); err != nil {
		t.Fatal(err)
	}
	f, err := model.Load(out, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct {
		golden, ids, prompt string
		steps               int
	}{
		{"golden_t0_n64_once_upon_a_time.txt", "tokens_t0_n64_once_upon_a_time.ids", "Once upon a time", 64},
		{"golden_t0_n200_noprompt.txt", "tokens_t0_n200_noprompt.ids", "", 200},
		{"golden_t0_n60_zoo.txt", "tokens_t0_n60_zoo.ids", "Zoo", 60},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, c.golden))
			if err != nil {
				t.Fatal(err)
			}
			wantPrompt, wantAll := readIDs(t, filepath.Join(dir, c.ids))
			tok, eog := tokenizerOf(t, out)
			ids := tok.Encode(c.prompt, tokenizer.EncodeOptions{AddBOS: true})
			if !slices.Equal(ids, wantPrompt) {
				t.Fatalf("prompt ids %v, want %v", ids, wantPrompt)
			}
			st, err := f.NewState(c.steps)
			if err != nil {
				t.Fatal(err)
			}
			eng := &engine.Engine{Model: f, Tok: tok, EOG: eog}
			// run.c forwards positions 0..steps-1 and prints the token
			// sampled after each: a run of n steps holds n+1 ids.
			res, err := eng.Generate(context.Background(), st, ids, engine.Params{MaxTokens: c.steps + 1 - len(ids), Sample: sample.Params{Temperature: 0}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := append(ids, res.Tokens...); !slices.Equal(got, wantAll) {
				t.Errorf("token stream differs:\n got %v\nwant %v", got, wantAll)
			}
			if got := c.prompt + res.Text; got != string(want) {
				t.Errorf("text differs:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func tokenizerOf(t *testing.T, path string) (*tokenizer.Tokenizer, []int) {
	t.Helper()
	f, err := ggufOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok, tokenizer.EndOfGeneration(f, tok)
}

var ggufOpen = gguf.Open
