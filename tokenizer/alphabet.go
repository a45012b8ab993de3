package tokenizer

// ByteToken returns the token text that stands for byte b in byte-level
// BPE vocabularies (GPT-2's alphabet: " " is "Ġ", "\n" is "Ċ"). Builders of
// vocabularies, such as trit's demo model, use it.
func ByteToken(b byte) string { return string(byteToRune[b]) }
