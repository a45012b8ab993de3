package tokenizer

import "golang.org/x/text/unicode/norm"

// nfc returns s in Unicode Normalization Form C. Bytes that are not valid
// UTF-8 pass through unchanged.
func nfc(s string) string {
	if norm.NFC.IsNormalString(s) {
		return s
	}
	return norm.NFC.String(s)
}
