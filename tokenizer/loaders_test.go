package tokenizer

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

func TestLoadLlama2C(t *testing.T) {
	data := llama2cFile(8, []string{"<unk>", "<s>", "</s>", "<0x41>", " a", "b c"})
	v, err := LoadLlama2C(bytes.NewReader(data), 6)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := []string{"<unk>", "<s>", "</s>", "<0x41>", "▁a", "b▁c"}
	wantTypes := []int32{TypeUnknown, TypeControl, TypeControl, TypeByte, TypeNormal, TypeNormal}
	for i := range wantTokens {
		if v.Tokens[i] != wantTokens[i] || v.Types[i] != wantTypes[i] || v.Scores[i] != float32(-i) {
			t.Errorf("token %d = %q type %d score %v; want %q type %d score %v",
				i, v.Tokens[i], v.Types[i], v.Scores[i], wantTokens[i], wantTypes[i], float32(-i))
		}
	}
	if v.Model != ModelLlama || v.BOS != 1 || v.EOS != 2 || v.UNK != 0 || v.PAD != -1 || !v.AddBOS || !v.AddSpacePrefix {
		t.Errorf("vocab header %+v", *v)
	}

	for _, tc := range []struct {
		name string
		data []byte
		n    int
		want error
	}{
		{"size", data, 2, nil},
		{"empty", nil, 6, io.ErrUnexpectedEOF},
		{"header", data[:2], 6, io.ErrUnexpectedEOF},
		{"max-len", llama2cFile(-1, nil), 6, ErrFormat},
		{"huge-max-len", llama2cFile(1<<30, nil), 6, ErrFormat},
		{"truncated-record", data[:10], 6, io.ErrUnexpectedEOF},
		{"truncated-text", data[:14], 6, io.ErrUnexpectedEOF},
		{"too-few", data, 7, io.ErrUnexpectedEOF},
		{"too-long", llama2cFile(2, []string{"<unk>"}), 3, ErrFormat},
	} {
		_, err := LoadLlama2C(bytes.NewReader(tc.data), tc.n)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// hfJSON assembles a tokenizer.json from replaceable parts.
func hfJSON(parts map[string]string) string {
	def := map[string]string{
		"added_tokens":  `[{"id":4,"content":"<|end|>","special":true},{"id":5,"content":"<x>","special":false}]`,
		"normalizer":    `{"type":"Sequence","normalizers":[{"type":"NFC"}]}`,
		"pre_tokenizer": `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` + strconv.Quote(regexQwen35) + `},"behavior":"Isolated","invert":false},{"type":"ByteLevel","use_regex":false}]}`,
		"decoder":       `{"type":"ByteLevel"}`,
		"model":         `{"type":"BPE","unk_token":"a","vocab":{"a":0,"b":1,"ab":2,"\"\u0120":3},"merges":["a b"]}`,
	}
	var sb strings.Builder
	sb.WriteString("{")
	first := true
	for _, k := range []string{"added_tokens", "normalizer", "pre_tokenizer", "decoder", "model"} {
		v, ok := parts[k]
		if !ok {
			v = def[k]
		}
		if !first {
			sb.WriteString(",")
		}
		first = false
		sb.WriteString(strconv.Quote(k) + ":" + v)
	}
	sb.WriteString("}")
	return sb.String()
}

func TestLoadHuggingFace(t *testing.T) {
	v, err := LoadHuggingFace(strings.NewReader(hfJSON(nil)))
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := []string{"a", "b", "ab", "\"Ġ", "<|end|>", "<x>"}
	wantTypes := []int32{TypeNormal, TypeNormal, TypeNormal, TypeNormal, TypeControl, TypeUserDefined}
	if strings.Join(v.Tokens, "|") != strings.Join(wantTokens, "|") {
		t.Errorf("Tokens = %q, want %q", v.Tokens, wantTokens)
	}
	for i, typ := range wantTypes {
		if v.Types[i] != typ {
			t.Errorf("Types[%d] = %d, want %d", i, v.Types[i], typ)
		}
	}
	if v.Model != ModelGPT2 || v.Pre != PreQwen35 || !v.NFC || v.UNK != 0 || v.BOS != -1 || v.EOS != -1 ||
		len(v.Merges) != 1 || v.Merges[0] != "a b" {
		t.Errorf("vocab %+v", *v)
	}

	for _, tc := range []struct {
		name  string
		parts map[string]string
		want  error
	}{
		{"json", map[string]string{"model": `{`}, ErrFormat},
		{"model-type", map[string]string{"model": `{"type":"WordPiece"}`}, ErrUnsupported},
		{"byte-fallback", map[string]string{"model": `{"type":"BPE","byte_fallback":true}`}, ErrUnsupported},
		{"ignore-merges", map[string]string{"model": `{"type":"BPE","ignore_merges":true}`}, ErrUnsupported},
		{"suffix", map[string]string{"model": `{"type":"BPE","end_of_word_suffix":"</w>"}`}, ErrUnsupported},
		{"normalizer", map[string]string{"normalizer": `{"type":"NFKC"}`}, ErrUnsupported},
		{"pre-missing", map[string]string{"pre_tokenizer": `null`}, ErrUnsupported},
		{"pre-bytelevel", map[string]string{"pre_tokenizer": `{"type":"ByteLevel","use_regex":true}`}, ErrUnsupported},
		{"pre-regex", map[string]string{"pre_tokenizer": `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"Isolated"},{"type":"ByteLevel","use_regex":false}]}`}, ErrPre},
		{"decoder", map[string]string{"decoder": `{"type":"Metaspace"}`}, ErrUnsupported},
		{"id-range", map[string]string{"model": `{"type":"BPE","vocab":{"a":0,"b":99}}`}, ErrFormat},
		{"id-negative", map[string]string{"model": `{"type":"BPE","vocab":{"a":-1}}`}, ErrFormat},
		{"id-twice", map[string]string{"model": `{"type":"BPE","vocab":{"a":0,"b":0}}`, "added_tokens": `[]`}, ErrFormat},
		{"id-hole", map[string]string{"model": `{"type":"BPE","vocab":{"a":0,"b":2}}`, "added_tokens": `[{"id":3,"content":"c"}]`}, ErrFormat},
		{"added-range", map[string]string{"added_tokens": `[{"id":1000,"content":"x"}]`}, ErrFormat},
		{"added-strip", map[string]string{"added_tokens": `[{"id":4,"content":"x","lstrip":true}]`}, ErrUnsupported},
		{"unk", map[string]string{"model": `{"type":"BPE","unk_token":"zz","vocab":{"a":0}}`}, ErrFormat},
		{"merge-parts", map[string]string{"model": `{"type":"BPE","vocab":{"a":0},"merges":[["a","b","c"]]}`}, ErrFormat},
		{"merge-type", map[string]string{"model": `{"type":"BPE","vocab":{"a":0},"merges":[1]}`}, ErrFormat},
		{"vocab-type", map[string]string{"model": `{"type":"BPE","vocab":["a"]}`}, ErrFormat},
	} {
		_, err := LoadHuggingFace(strings.NewReader(hfJSON(tc.parts)))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	// A merge naming an unknown token passes the loader and fails in New.
	_, err = FromHuggingFace(strings.NewReader(hfJSON(map[string]string{
		"model": `{"type":"BPE","vocab":{"a":0,"b":1,"c":2,"d":3},"merges":["a c"]}`, "added_tokens": `[]`,
	})))
	var me *MergeError
	if !errors.As(err, &me) {
		t.Errorf("FromHuggingFace with a bad merge: %v, want a *MergeError", err)
	}
}
