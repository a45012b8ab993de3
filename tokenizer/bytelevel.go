package tokenizer

// GPT-2's byte-level alphabet: every byte is shown as a printable rune so
// that BPE can work on strings. Printable Latin-1 bytes stand for
// themselves; the others are moved, in order, to U+0100 and up (space
// becomes 'Ġ' U+0120, newline 'Ċ' U+010A).
var (
	byteToRune [256]rune
	runeToPos  [256 + 68]int16 // rune -> byte+1, 0 when the rune is not in the alphabet
)

func init() {
	n := rune(0)
	for b := range 256 {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		runeToPos[byteToRune[b]] = int16(b + 1)
	}
}

// runeToByte maps a rune of the byte-level alphabet back to its byte.
func runeToByte(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(runeToPos) || runeToPos[r] == 0 {
		return 0, false
	}
	return byte(runeToPos[r] - 1), true
}
