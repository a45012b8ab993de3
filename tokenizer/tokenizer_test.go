package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// byteLevel returns the byte-level (GPT-2 alphabet) spelling of s.
func byteLevel(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteToRune[s[i]])
	}
	return sb.String()
}

// tinyGPT2 builds a gpt2 Vocab whose first 256 ids are the bytes, followed
// by one token per merge (given as raw-text pairs) and by the specials.
func tinyGPT2(pre string, merges [][2]string, specials map[string]int32) *Vocab {
	v := &Vocab{Model: ModelGPT2, Pre: pre, BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	for b := range 256 {
		v.Tokens = append(v.Tokens, string(byteToRune[b]))
		v.Types = append(v.Types, TypeNormal)
	}
	for _, m := range merges {
		l, r := byteLevel(m[0]), byteLevel(m[1])
		v.Merges = append(v.Merges, l+" "+r)
		v.Tokens = append(v.Tokens, l+r)
		v.Types = append(v.Types, TypeNormal)
	}
	// Deterministic order for the special ids.
	keys := make([]string, 0, len(specials))
	for k := range specials {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v.Tokens = append(v.Tokens, k)
		v.Types = append(v.Types, specials[k])
	}
	return v
}

func mustNew(t testing.TB, v *Vocab) *Tokenizer {
	t.Helper()
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// pieces returns the texts of ids, raw bytes for byte tokens.
func pieces(tok *Tokenizer, ids []int) []string {
	var out []string
	for _, id := range ids {
		out = append(out, tok.Decode([]int{id}))
	}
	return out
}

func TestByteLevelMerges(t *testing.T) {
	merges := [][2]string{
		{" ", "t"}, {"h", "e"}, {" t", "he"}, {"a", "b"}, {"b", "c"}, {"a", "a"},
	}
	specials := map[string]int32{"<|end|>": TypeControl, "<|e": TypeControl, "<tool>": TypeUserDefined}
	tok := mustNew(t, tinyGPT2(PreQwen2, merges, specials))
	for _, tc := range []struct {
		in    string
		opts  EncodeOptions
		want  []string
		count int // expected number of ids when want is nil
	}{
		{in: " the", want: []string{" the"}},
		{in: "the", want: []string{"t", "he"}},
		{in: "abc", want: []string{"ab", "c"}}, // "a b" ranks before "b c"
		{in: "aaa", want: []string{"aa", "a"}}, // equal ranks: leftmost first
		{in: "x<|end|>y", opts: EncodeOptions{ParseSpecial: true}, want: []string{"x", "", "y"}},
		{in: "x<|end|>y", count: 9}, // control tokens need ParseSpecial
		{in: "<|e<|end|>", opts: EncodeOptions{ParseSpecial: true}, want: []string{"", ""}},
		{in: "a<tool>b", want: []string{"a", "<tool>", "b"}}, // user-defined: always matched
	} {
		ids := tok.Encode(tc.in, tc.opts)
		if tc.want == nil {
			if len(ids) != tc.count {
				t.Errorf("Encode(%q) = %v, want %d ids", tc.in, ids, tc.count)
			}
			continue
		}
		if got := pieces(tok, ids); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q, %+v) pieces = %q, want %q", tc.in, tc.opts, got, tc.want)
		}
	}
	end, ok := tok.TokenID("<|end|>")
	if !ok || !tok.IsControl(end) {
		t.Fatalf("TokenID(<|end|>) = %d, %v; control %v", end, ok, tok.IsControl(end))
	}
	if got := tok.Encode("<|end|>", EncodeOptions{ParseSpecial: true}); !slices.Equal(got, []int{end}) {
		t.Errorf("Encode(<|end|>) = %v, want [%d]", got, end)
	}
	if got := tok.Encode("", EncodeOptions{AddBOS: true}); len(got) != 0 {
		t.Errorf("Encode(\"\") = %v, want none", got)
	}
}

func TestQwen35Marks(t *testing.T) {
	// "e" + U+0301 COMBINING ACUTE ACCENT merges into one token only when
	// the pre-tokenizer keeps the mark in the letter run (qwen35).
	merges := [][2]string{{"\xcc", "\x81"}, {"e", "\u0301"}}
	const text = "e\u0301x"
	for _, tc := range []struct {
		pre  string
		want []string
	}{
		{PreQwen2, []string{"e", "\u0301", "x"}},
		{PreQwen35, []string{"e\u0301", "x"}},
	} {
		tok := mustNew(t, tinyGPT2(tc.pre, merges, nil))
		ids := tok.Encode(text, EncodeOptions{})
		if got := pieces(tok, ids); !slices.Equal(got, tc.want) {
			t.Errorf("%s: pieces %q, want %q", tc.pre, got, tc.want)
		}
		if got := tok.Decode(ids); got != text {
			t.Errorf("%s: Decode = %q", tc.pre, got)
		}
	}
}

// split runs a scanner over s.
func split(scan func(string, int) int, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := scan(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func TestScanners(t *testing.T) {
	for _, tc := range []struct {
		in            string
		qwen2, qwen35 []string // qwen35 nil: same as qwen2
	}{
		{"Hello world", []string{"Hello", " world"}, nil},
		{"  Hello", []string{" ", " Hello"}, nil},
		{"\t\tx", []string{"\t", "\tx"}, nil},
		{"end  ", []string{"end", "  "}, nil},
		{"a\n\n b", []string{"a", "\n\n", " b"}, nil},
		{"x  \n\t", []string{"x", "  \n", "\t"}, nil},
		{"I've 'RE we'LL 'd", []string{"I", "'ve", " '", "RE", " we", "'LL", " '", "d"}, nil},
		{"'sa", []string{"'s", "a"}, nil},
		{"' era", []string{"'", " era"}, nil},
		{"12345", []string{"1", "2", "3", "4", "5"}, nil},
		{"3.3 (x)", []string{"3", ".", "3", " (", "x", ")"}, nil},
		{"hi!!!\n\nyo", []string{"hi", "!!!\n\n", "yo"}, nil},
		{" !\r\n", []string{" !\r\n"}, nil},
		{"ab\u00a0c", []string{"ab", "\u00a0c"}, nil},
		{"Привет мир", []string{"Привет", " мир"}, nil},
		{"a\xffb", []string{"a", "\xffb"}, nil},
		{"ab\u0301!", []string{"ab", "\u0301!"}, []string{"ab\u0301", "!"}},
		{"\u0301\u0301", []string{"\u0301\u0301"}, []string{"\u0301\u0301"}},
		{"1\u0301a", []string{"1", "\u0301a"}, []string{"1", "\u0301a"}},
		{"x\n", []string{"x", "\n"}, nil},
		{" ", []string{" "}, nil},
		{"\u3000\u3000x", []string{"\u3000", "\u3000x"}, nil},
	} {
		want35 := tc.qwen35
		if want35 == nil {
			want35 = tc.qwen2
		}
		if got := split(scanQwen2, tc.in); !slices.Equal(got, tc.qwen2) {
			t.Errorf("qwen2 %q: got %q, want %q", tc.in, got, tc.qwen2)
		}
		if got := split(scanQwen35, tc.in); !slices.Equal(got, want35) {
			t.Errorf("qwen35 %q: got %q, want %q", tc.in, got, want35)
		}
	}
}

// tinyLlama builds a llama Vocab: <unk>, <s>, </s>, the 256 byte tokens,
// then the given scored pieces ("▁" for space).
func tinyLlama(pieces map[string]float32) *Vocab {
	v := &Vocab{
		Model: ModelLlama, BOS: 1, EOS: 2, PAD: -1, UNK: 0,
		AddBOS: true, AddSpacePrefix: true,
		Tokens: []string{"<unk>", "<s>", "</s>"},
		Types:  []int32{TypeUnknown, TypeControl, TypeControl},
		Scores: []float32{0, 0, 0},
	}
	for b := range 256 {
		v.Tokens = append(v.Tokens, "<0x"+strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]))+">")
		v.Types = append(v.Types, TypeByte)
		v.Scores = append(v.Scores, 0)
	}
	keys := make([]string, 0, len(pieces))
	for k := range pieces {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v.Tokens = append(v.Tokens, k)
		v.Types = append(v.Types, TypeNormal)
		v.Scores = append(v.Scores, pieces[k])
	}
	return v
}

func TestLlamaScores(t *testing.T) {
	tok := mustNew(t, tinyLlama(map[string]float32{
		"▁": -1, "a": -1, "b": -1, "c": -1, "▁a": -2, "ab": -3, "bc": -1.5, "abc": -0.5,
	}))
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// "bc" (-1.5) beats "▁a" (-2) and "ab" (-3); then "abc" (-0.5)
		// beats "▁a"; "▁abc" is no token.
		{"abc", []string{"<s>", "▁", "abc"}},
		{" x", []string{"<s>", "▁", "▁", "<0x78>"}},
		{"é", []string{"<s>", "▁", "<0xC3>", "<0xA9>"}},
	} {
		ids := tok.Encode(tc.in, EncodeOptions{AddBOS: true})
		var got []string
		for _, id := range ids {
			got = append(got, tok.Token(id))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if dec := tok.Decode(ids); dec != tc.in {
			t.Errorf("Decode(Encode(%q)) = %q", tc.in, dec)
		}
	}
	// Two consecutive texts split by a control token each get a prefix.
	ids := tok.Encode("a</s>a", EncodeOptions{ParseSpecial: true})
	var got []string
	for _, id := range ids {
		got = append(got, tok.Token(id))
	}
	if want := []string{"▁a", "</s>", "▁a"}; !slices.Equal(got, want) {
		t.Errorf("Encode(a</s>a) = %q, want %q", got, want)
	}
	// With "▁a" scoring best, the prefix captures the "a".
	tok2 := mustNew(t, tinyLlama(map[string]float32{"▁": -1, "▁a": -1, "ab": -3, "bc": -1.5}))
	ids = tok2.Encode("abc", EncodeOptions{})
	got = got[:0]
	for _, id := range ids {
		got = append(got, tok2.Token(id))
	}
	if want := []string{"▁a", "bc"}; !slices.Equal(got, want) {
		t.Errorf("Encode(abc) = %q, want %q", got, want)
	}
	// Without a dummy prefix there is no "▁".
	v := tinyLlama(map[string]float32{"▁": -1, "▁a": -1, "a": -1, "bc": -1.5})
	v.AddSpacePrefix = false
	tok3 := mustNew(t, v)
	if ids := tok3.Encode("abc", EncodeOptions{}); len(ids) != 2 || tok3.Token(ids[0]) != "a" {
		t.Errorf("Encode(abc) without prefix = %v", ids)
	}
}

func TestDecoderStreaming(t *testing.T) {
	tok := mustNew(t, tinyGPT2(PreQwen2, nil, nil))
	const text = "aé€🦙\xffz"
	ids := tok.Encode(text, EncodeOptions{})
	if len(ids) != len(text) { // no merges: one id per byte
		t.Fatalf("got %d ids for %d bytes", len(ids), len(text))
	}
	d := tok.NewDecoder()
	var outs []string
	for _, id := range ids {
		outs = append(outs, d.Add(id))
	}
	outs = append(outs, d.Flush())
	want := []string{"a", "", "é", "", "", "€", "", "", "", "🦙", "\xff", "z", ""}
	if !slices.Equal(outs, want) {
		t.Errorf("Add outputs %q, want %q", outs, want)
	}
	// An incomplete character at the end comes out of Flush.
	d.Add(ids[1])
	if got := d.Flush(); got != "\xc3" {
		t.Errorf("Flush = %q, want \\xc3", got)
	}
}

func TestNewErrors(t *testing.T) {
	good := func() *Vocab { return tinyGPT2(PreQwen2, [][2]string{{"a", "b"}}, nil) }
	for _, tc := range []struct {
		name   string
		mutate func(v *Vocab)
		want   error
		as     any
	}{
		{"model", func(v *Vocab) { v.Model = "bert" }, ErrModel, nil},
		{"pre", func(v *Vocab) { v.Pre = "llama3" }, ErrPre, nil},
		{"pre-default", func(v *Vocab) { v.Pre = "" }, ErrPre, nil},
		{"empty", func(v *Vocab) { v.Tokens, v.Types, v.Merges = nil, nil, nil }, ErrEmpty, nil},
		{"scores", func(v *Vocab) { v.Scores = []float32{1} }, nil, new(*LengthError)},
		{"types", func(v *Vocab) { v.Types = v.Types[:3] }, nil, new(*LengthError)},
		{"bos", func(v *Vocab) { v.BOS = len(v.Tokens) }, nil, new(*IDError)},
		{"unk", func(v *Vocab) { v.UNK = -2 }, nil, new(*IDError)},
		{"merge-sep", func(v *Vocab) { v.Merges = []string{"ab"} }, nil, new(*MergeError)},
		{"merge-side", func(v *Vocab) { v.Merges = []string{"a zz"} }, nil, new(*MergeError)},
		{"merge-result", func(v *Vocab) { v.Merges = []string{"b a"} }, nil, new(*MergeError)},
	} {
		v := good()
		tc.mutate(v)
		_, err := New(v)
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		case tc.as != nil && !errors.As(err, tc.as):
			t.Errorf("%s: error %v (%T) has the wrong type", tc.name, err, err)
		}
	}
	if _, err := New(good()); err != nil {
		t.Errorf("good vocab: %v", err)
	}
}

func TestAccessors(t *testing.T) {
	v := tinyLlama(map[string]float32{"▁a": -1})
	tok := mustNew(t, v)
	if tok.VocabSize() != len(v.Tokens) || tok.BOS() != 1 || tok.EOS() != 2 || tok.UNK() != 0 || tok.PAD() != -1 {
		t.Errorf("size %d bos %d eos %d unk %d pad %d", tok.VocabSize(), tok.BOS(), tok.EOS(), tok.UNK(), tok.PAD())
	}
	if tok.Model() != ModelLlama || tok.Token(-1) != "" || tok.Token(1) != "<s>" || tok.Type(3) != TypeByte || tok.Type(1<<20) != 0 {
		t.Errorf("model %q token(-1) %q token(1) %q type(3) %d", tok.Model(), tok.Token(-1), tok.Token(1), tok.Type(3))
	}
	if _, ok := tok.TokenID("nope"); ok {
		t.Error("TokenID(nope) found")
	}
	if got := tok.Decode([]int{-5, 1, 1 << 30, 2}); got != "" {
		t.Errorf("Decode of specials and junk = %q", got)
	}
}

func TestNFC(t *testing.T) {
	merges := [][2]string{{"\xc3", "\xa9"}}
	v := tinyGPT2(PreQwen2, merges, nil)
	v.NFC = true
	tok := mustNew(t, v)
	composed := tok.Encode("\u00e9", EncodeOptions{})
	if got := tok.Encode("e\u0301", EncodeOptions{}); !slices.Equal(got, composed) || len(got) != 1 {
		t.Errorf("Encode(e+U+0301) = %v, want %v (one token)", got, composed)
	}
}

func TestConcurrentEncode(t *testing.T) {
	tok := mustNew(t, tinyGPT2(PreQwen2, [][2]string{{"a", "b"}, {"ab", "c"}}, nil))
	const text = "abc abcd xyz abc"
	want := tok.Encode(text, EncodeOptions{})
	done := make(chan []int)
	for range 8 {
		go func() { done <- tok.Encode(text, EncodeOptions{}) }()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent Encode = %v, want %v", got, want)
		}
	}
}

func TestCompleteUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"a", 1}, {"\xe2\x82", 0}, {"a\xf0\x9f\xa6", 1}, {"\xf0\x9f\xa6\x99", 4},
		{"\xff", 1}, {"\xe2\x28", 2}, {"\x80\x80\x80\x80", 4},
	} {
		if got := completeUTF8(tc.in); got != tc.want {
			t.Errorf("completeUTF8(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestByteToken(t *testing.T) {
	for b, want := range map[byte]string{' ': "Ġ", '\n': "Ċ", 'a': "a", 0: "Ā", 0xff: "ÿ", 0xad: "Ń"} {
		if got := ByteToken(b); got != want {
			t.Errorf("ByteToken(%#x) = %q, want %q", b, got, want)
		}
	}
	seen := map[string]bool{}
	for b := range 256 {
		s := ByteToken(byte(b))
		if r, ok := runeToByte([]rune(s)[0]); !ok || r != byte(b) || seen[s] {
			t.Errorf("ByteToken(%#x) = %q does not map back", b, s)
		}
		seen[s] = true
	}
	if _, ok := runeToByte('€'); ok {
		t.Error("runeToByte('€') reported a byte")
	}
}

func TestNewDecoderAfter(t *testing.T) {
	tok := mustNew(t, tinyLlama(map[string]float32{"▁a": -1}))
	a, _ := tok.TokenID("▁a")
	if got := tok.NewDecoderAfter(tok.BOS()).Add(a); got != "a" {
		t.Errorf("after BOS: %q, want \"a\"", got)
	}
	if got := tok.NewDecoder().Add(a); got != " a" {
		t.Errorf("fresh decoder: %q, want \" a\"", got)
	}
	if got := tok.NewDecoderAfter(a).Add(a); got != " a" {
		t.Errorf("after a: %q, want \" a\"", got)
	}
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&LengthError{"Scores", 1, 2}, "Scores has 1 entries for 2 tokens"},
		{&IDError{"BOS", 9, 3}, "BOS id 9 outside vocabulary of 3 tokens"},
		{&MergeError{4, "a b", "side not in vocabulary"}, `merge 4 "a b": side not in vocabulary`},
	} {
		if got := tc.err.Error(); !strings.HasPrefix(got, "tokenizer: ") || !strings.Contains(got, tc.want) {
			t.Errorf("Error() = %q, want it to contain %q", got, tc.want)
		}
	}
}

func TestLlamaWithoutTypes(t *testing.T) {
	v := tinyLlama(map[string]float32{"▁": -1})
	v.Types = nil
	tok := mustNew(t, v)
	ids := tok.Encode("é", EncodeOptions{})
	if len(ids) != 3 || tok.Token(ids[1]) != "<0xC3>" {
		t.Fatalf("Encode(é) = %v", ids)
	}
	if got := tok.Decode(ids); got != " é" {
		t.Errorf("Decode = %q, want \" é\"", got)
	}
}
