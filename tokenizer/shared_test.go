package tokenizer

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"trit/internal/testdata"
	"unicode/utf8"
)

var qwen3 struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// qwen3Tokenizer loads the shared Qwen3 tokenizer.json once per test binary.
func qwen3Tokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	p := testdata.Path(t, "tokenizers/qwen3/tokenizer.json")
	qwen3.once.Do(func() {
		f, err := os.Open(p)
		if err != nil {
			qwen3.err = err
			return
		}
		defer f.Close()
		qwen3.tok, qwen3.err = FromHuggingFace(f)
	})
	if qwen3.err != nil {
		t.Fatal(qwen3.err)
	}
	return qwen3.tok
}

// vocabTestCases reads a llama.cpp test-tokenizer-0 pair: inputs are
// separated by "\n__ggml_vocab_test__\n" (every input is followed by one),
// and the .out file has one line of space-separated ids per input.
func vocabTestCases(t *testing.T, base string) (inputs []string, want [][]int) {
	t.Helper()
	inp, err := os.ReadFile(testdata.Path(t, base+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(testdata.Path(t, base+".out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	inputs = strings.Split(string(inp), sep)
	if inputs[len(inputs)-1] != "" {
		t.Fatalf("%s.inp does not end with the separator", base)
	}
	inputs = inputs[:len(inputs)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%d inputs but %d expected lines", len(inputs), len(lines))
	}
	for i, l := range lines {
		var ids []int
		for _, f := range strings.Fields(l) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			ids = append(ids, id)
		}
		want = append(want, ids)
	}
	return inputs, want
}

func TestQwen2VocabCases(t *testing.T) {
	tok := qwen3Tokenizer(t)
	inputs, want := vocabTestCases(t, "tokenizers/llama.cpp-vocab/ggml-vocab-qwen2.gguf")
	if len(inputs) != 46 {
		t.Errorf("got %d cases, want 46", len(inputs))
	}
	for i, in := range inputs {
		got := tok.Encode(in, EncodeOptions{})
		if !slices.Equal(got, want[i]) {
			t.Errorf("case %d Encode(%q):\n got %v\nwant %v", i, in, got, want[i])
		}
		if dec := tok.Decode(got); dec != in {
			t.Errorf("case %d Decode(Encode(%q)) = %q", i, in, dec)
		}
	}
}

// loadTok512 loads llama2.c's 512-token vocabulary.
func loadTok512(t testing.TB) *Tokenizer {
	t.Helper()
	data, err := os.ReadFile(testdata.Path(t, "llama2c/tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadLlama2C(bytes.NewReader(data), 512)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// readIDs reads a llama2c tokens_*.ids file: a "prompt" line and an "all"
// line, each a label followed by ids.
func readIDs(t *testing.T, name string) (prompt, all []int) {
	t.Helper()
	data, err := os.ReadFile(testdata.Path(t, "llama2c/"+name))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var ids []int
		for _, s := range f[1:] {
			id, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ids = append(ids, id)
		}
		switch f[0] {
		case "prompt":
			prompt = ids
		case "all":
			all = ids
		default:
			t.Fatalf("%s: unknown line label %q", name, f[0])
		}
	}
	if prompt == nil || all == nil {
		t.Fatalf("%s: missing prompt or all line", name)
	}
	return prompt, all
}

func TestLlama2C(t *testing.T) {
	tok := loadTok512(t)
	for _, tc := range []struct {
		name, prompt, ids, golden string
	}{
		{"once", "Once upon a time", "tokens_t0_n64_once_upon_a_time.ids", "golden_t0_n64_once_upon_a_time.txt"},
		{"zoo", "Zoo", "tokens_t0_n60_zoo.ids", "golden_t0_n60_zoo.txt"},
		{"noprompt", "", "tokens_t0_n200_noprompt.ids", "golden_t0_n200_noprompt.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prompt, all := readIDs(t, tc.ids)
			golden, err := os.ReadFile(testdata.Path(t, "llama2c/"+tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Encode(tc.prompt, EncodeOptions{AddBOS: true}); !slices.Equal(got, prompt) {
				t.Errorf("Encode(%q) = %v, want %v", tc.prompt, got, prompt)
			}
			if got := tok.Decode(all); got != string(golden) {
				t.Errorf("Decode(all) =\n%q\nwant\n%q", got, golden)
			}
			d := tok.NewDecoder()
			var sb strings.Builder
			for _, id := range all {
				sb.WriteString(d.Add(id))
			}
			sb.WriteString(d.Flush())
			if sb.String() != string(golden) {
				t.Errorf("streaming decode =\n%q\nwant\n%q", sb.String(), golden)
			}
		})
	}
}

func TestQwen3Specials(t *testing.T) {
	tok := qwen3Tokenizer(t)
	if tok.VocabSize() != 151669 {
		t.Errorf("VocabSize = %d, want 151669", tok.VocabSize())
	}
	for _, tc := range []struct {
		text string
		id   int
		ctl  bool
	}{
		{"<|endoftext|>", 151643, true},
		{"<|im_start|>", 151644, true},
		{"<|im_end|>", 151645, true},
		{"<think>", 151667, false},
		{"</think>", 151668, false},
	} {
		if id, ok := tok.TokenID(tc.text); !ok || id != tc.id || tok.IsControl(id) != tc.ctl {
			t.Errorf("TokenID(%q) = %d, %v, control %v; want %d, control %v", tc.text, id, ok, tok.IsControl(id), tc.id, tc.ctl)
		}
	}
	const chat = "<|im_start|>user\nhi<|im_end|>\n<think>\n"
	ids := tok.Encode(chat, EncodeOptions{ParseSpecial: true, AddBOS: true})
	// "\n" is 198 in every Qwen vocabulary; "user" and "hi" are one token each.
	if len(ids) != 8 || ids[0] != 151644 || ids[2] != 198 || ids[4] != 151645 || ids[5] != 198 || ids[6] != 151667 || ids[7] != 198 {
		t.Errorf("Encode(chat) = %v", ids)
	}
	if got, want := tok.Decode(ids), "user\nhi\n<think>\n"; got != want {
		t.Errorf("Decode = %q, want %q (control tokens omitted)", got, want)
	}
	// Without ParseSpecial control tokens are plain text, user-defined ones
	// still match.
	ids = tok.Encode(chat, EncodeOptions{})
	if slices.Contains(ids, 151644) || !slices.Contains(ids, 151667) {
		t.Errorf("Encode(chat) without ParseSpecial = %v", ids)
	}
	if got := tok.Decode(ids); got != chat {
		t.Errorf("Decode = %q, want %q", got, chat)
	}
}

func TestQwen3StreamingAndNFC(t *testing.T) {
	tok := qwen3Tokenizer(t)
	const text = "Grüße, 世界! 🦙🦙 ፀ ℬ 𝔘 — naïve café"
	ids := tok.Encode(text, EncodeOptions{})
	d := tok.NewDecoder()
	var sb strings.Builder
	for _, id := range ids {
		s := d.Add(id)
		if !utf8.ValidString(s) {
			t.Errorf("Add(%d) returned invalid UTF-8 %q", id, s)
		}
		sb.WriteString(s)
	}
	if rest := d.Flush(); rest != "" {
		t.Errorf("Flush = %q, want empty", rest)
	}
	if sb.String() != text {
		t.Errorf("streamed %q, want %q", sb.String(), text)
	}
	// tokenizer.json asks for NFC: decomposed input encodes like composed.
	if a, b := tok.Encode("cafe\u0301", EncodeOptions{}), tok.Encode("café", EncodeOptions{}); !slices.Equal(a, b) {
		t.Errorf("NFC: %v != %v", a, b)
	}
}
