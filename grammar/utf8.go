package grammar

import (
	"slices"
	"unicode/utf8"
)

// A runeRange is the code points lo..hi, inclusive.
type runeRange struct{ lo, hi rune }

// byteRange is the bytes lo..hi, inclusive.
type byteRange struct{ lo, hi byte }

const (
	surrogateLo = 0xD800
	surrogateHi = 0xDFFF
)

// normalize sorts and merges ranges and removes the surrogates, which have
// no UTF-8 encoding.
func normalize(rs []runeRange) []runeRange {
	var out []runeRange
	for _, r := range rs {
		if r.lo > r.hi {
			continue
		}
		r.hi = min(r.hi, utf8.MaxRune)
		if r.lo <= surrogateHi && r.hi >= surrogateLo {
			if r.lo < surrogateLo {
				out = append(out, runeRange{r.lo, surrogateLo - 1})
			}
			if r.hi > surrogateHi {
				out = append(out, runeRange{surrogateHi + 1, r.hi})
			}
			continue
		}
		if r.lo <= r.hi {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b runeRange) int { return int(a.lo - b.lo) })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r.lo <= merged[n-1].hi+1 {
			merged[n-1].hi = max(merged[n-1].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// complement returns the code points not in rs (rs normalized).
func complement(rs []runeRange) []runeRange {
	var out []runeRange
	next := rune(0)
	for _, r := range rs {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, runeRange{next, utf8.MaxRune})
	}
	return normalize(out)
}

// utf8Sequences splits the code points lo..hi (no surrogates) into
// sequences of byte ranges: a byte string is the UTF-8 encoding of a code
// point in lo..hi exactly when it matches one of the sequences byte by byte.
func utf8Sequences(lo, hi rune) [][]byteRange {
	var out [][]byteRange
	var split func(lo, hi rune)
	split = func(lo, hi rune) {
		// The same encoded length on both ends.
		for _, b := range []rune{0x7F, 0x7FF, 0xFFFF} {
			if lo <= b && b < hi {
				split(lo, b)
				split(b+1, hi)
				return
			}
		}
		// Each continuation byte must span a whole 64-value block unless
		// lo and hi share every byte before it.
		for i := 1; i < 4; i++ {
			m := rune(1)<<(6*i) - 1
			if lo&^m != hi&^m {
				if lo&m != 0 {
					split(lo, lo|m)
					split((lo|m)+1, hi)
					return
				}
				if hi&m != m {
					split(lo, (hi&^m)-1)
					split(hi&^m, hi)
					return
				}
			}
		}
		var a, b [4]byte
		n := utf8.EncodeRune(a[:], lo)
		utf8.EncodeRune(b[:], hi)
		seq := make([]byteRange, n)
		for i := range n {
			seq[i] = byteRange{a[i], b[i]}
		}
		out = append(out, seq)
	}
	split(lo, hi)
	return out
}
