package tokenizer_test

import (
	"fmt"
	"log"
	"strings"

	"trit/tokenizer"
)

// exampleJSON is a tiny tokenizer.json in the shape Qwen uses: byte-level
// BPE ("Ġ" is the space byte), the qwen2 Split regex, NFC and one special
// added token.
const exampleJSON = `{
  "added_tokens": [{"id": 17, "content": "<|end|>", "special": true}],
  "normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE",
    "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7, "He": 8, "ll": 9,
              "llo": 10, "Hello": 11, "Ġw": 12, "or": 13, "Ġwor": 14, "ld": 15, "Ġworld": 16},
    "merges": [["H", "e"], ["l", "l"], ["ll", "o"], ["He", "llo"], ["Ġ", "w"], ["o", "r"],
               ["Ġw", "or"], ["l", "d"], ["Ġwor", "ld"]]}
}`

func ExampleFromHuggingFace() {
	tok, err := tokenizer.FromHuggingFace(strings.NewReader(exampleJSON))
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("Hello world<|end|>", tokenizer.EncodeOptions{ParseSpecial: true})
	fmt.Println(ids)
	for _, id := range ids {
		fmt.Printf("%d=%q\n", id, tok.Token(id))
	}
	fmt.Printf("%q\n", tok.Decode(ids))
	// Output:
	// [11 16 17]
	// 11="Hello"
	// 16="Ġworld"
	// 17="<|end|>"
	// "Hello world"
}

func ExampleDecoder() {
	tok, err := tokenizer.FromHuggingFace(strings.NewReader(exampleJSON))
	if err != nil {
		log.Fatal(err)
	}
	d := tok.NewDecoder()
	for _, id := range []int{11, 16, 17} {
		fmt.Printf("%q\n", d.Add(id))
	}
	fmt.Printf("%q\n", d.Flush())
	// Output:
	// "Hello"
	// " world"
	// ""
	// ""
}
