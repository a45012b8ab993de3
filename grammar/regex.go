package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// patternGBNF translates a JSON Schema "pattern" (ECMA 262 syntax, common
// subset: literals, escapes, classes, \d \w \s and their negations, ".",
// groups, "|", and the quantifiers * + ? {m} {m,} {m,n}) into a GBNF
// expression over the characters of a JSON string, as they appear
// escaped between the quotes. A pattern not anchored with ^ (or $) may
// have any text before (or after) its match. Characters that JSON must
// escape are left out of classes and ".", so the output is a subset of
// what the pattern admits.
func patternGBNF(p string) (string, error) {
	anchoredStart := strings.HasPrefix(p, "^")
	p = strings.TrimPrefix(p, "^")
	anchoredEnd := strings.HasSuffix(p, "$") && !strings.HasSuffix(p, `\$`)
	if anchoredEnd {
		p = p[:len(p)-1]
	}
	r := &reParser{src: p}
	e, err := r.alt()
	if err == nil && r.pos < len(r.src) {
		err = r.errf("unexpected %q", r.src[r.pos])
	}
	if err != nil {
		return "", err
	}
	e = "( " + e + " )"
	if !anchoredStart {
		e = "char* " + e
	}
	if !anchoredEnd {
		e += " char*"
	}
	return e, nil
}

type reParser struct {
	src   string
	pos   int
	depth int
}

func (r *reParser) errf(format string, args ...any) error {
	return fmt.Errorf("pattern at offset %d: %s", r.pos, fmt.Sprintf(format, args...))
}

func (r *reParser) peek() byte {
	if r.pos < len(r.src) {
		return r.src[r.pos]
	}
	return 0
}

func (r *reParser) alt() (string, error) {
	if r.depth++; r.depth > maxNesting {
		return "", r.errf("groups nested too deep")
	}
	defer func() { r.depth-- }()
	var alts []string
	for {
		s, err := r.seq()
		if err != nil {
			return "", err
		}
		alts = append(alts, s)
		if r.peek() != '|' {
			return strings.Join(alts, " | "), nil
		}
		r.pos++
	}
}

func (r *reParser) seq() (string, error) {
	var items []string
	for r.pos < len(r.src) {
		c := r.peek()
		if c == '|' || c == ')' {
			break
		}
		atom, err := r.atom()
		if err != nil {
			return "", err
		}
		q, err := r.quant()
		if err != nil {
			return "", err
		}
		if q != "" {
			atom = "( " + atom + " )" + q
		}
		items = append(items, atom)
	}
	if len(items) == 0 {
		return `""`, nil
	}
	return strings.Join(items, " "), nil
}

func (r *reParser) quant() (string, error) {
	var q string
	switch r.peek() {
	case '*', '+', '?':
		q = string(r.peek())
		r.pos++
	case '{':
		end := strings.IndexByte(r.src[r.pos:], '}')
		if end < 0 {
			return "", r.errf("unterminated {")
		}
		body := r.src[r.pos+1 : r.pos+end]
		lo, hi, ok := strings.Cut(body, ",")
		m, err := strconv.Atoi(lo)
		if err != nil || m > maxCount {
			return "", r.errf("bad repetition {%s}", body)
		}
		if ok && hi != "" {
			n, err := strconv.Atoi(hi)
			if err != nil || n < m || n > maxCount {
				return "", r.errf("bad repetition {%s}", body)
			}
		}
		q = "{" + strings.ReplaceAll(body, " ", "") + "}"
		r.pos += end + 1
	default:
		return "", nil
	}
	if r.peek() == '?' { // lazy: the same language
		r.pos++
	}
	if c := r.peek(); c == '*' || c == '+' || c == '?' || c == '{' {
		return "", r.errf("nested quantifier")
	}
	return q, nil
}

// jsonSafe are the characters a JSON string holds unescaped (DEL left out,
// as in the char primitive).
var jsonSafe = complement(normalize([]runeRange{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}}))

func (r *reParser) atom() (string, error) {
	c := r.peek()
	switch c {
	case '(':
		r.pos++
		if strings.HasPrefix(r.src[r.pos:], "?:") {
			r.pos += 2
		} else if r.peek() == '?' {
			return "", r.errf("lookaround and named groups are not supported")
		}
		e, err := r.alt()
		if err != nil {
			return "", err
		}
		if r.peek() != ')' {
			return "", r.errf("missing )")
		}
		r.pos++
		return "( " + e + " )", nil
	case '[':
		return r.class()
	case '.':
		r.pos++
		return classGBNF(intersect(jsonSafe, complement([]runeRange{{'\n', '\n'}, {'\r', '\r'}}))), nil
	case '^', '$':
		return "", r.errf("anchors are supported only at the ends")
	case '*', '+', '?', '{':
		return "", r.errf("quantifier %q without an atom", c)
	case '\\':
		rs, err := r.escape()
		if err != nil {
			return "", err
		}
		if len(rs) == 1 && rs[0].lo == rs[0].hi {
			return charGBNF(rs[0].lo), nil
		}
		return classGBNF(intersect(jsonSafe, rs)), nil
	}
	ch, n := utf8.DecodeRuneInString(r.src[r.pos:])
	r.pos += n
	return charGBNF(ch), nil
}

// escape reads a backslash escape: a class (\d, \w, \s and negations) or
// one character.
func (r *reParser) escape() ([]runeRange, error) {
	r.pos++
	if r.pos >= len(r.src) {
		return nil, r.errf("trailing backslash")
	}
	c := r.src[r.pos]
	r.pos++
	digit := []runeRange{{'0', '9'}}
	word := normalize([]runeRange{{'0', '9'}, {'a', 'z'}, {'A', 'Z'}, {'_', '_'}})
	space := normalize([]runeRange{{' ', ' '}, {'\t', '\r'}, {0xA0, 0xA0}, {0x2028, 0x2029}, {0xFEFF, 0xFEFF}})
	one := func(x rune) []runeRange { return []runeRange{{x, x}} }
	switch c {
	case 'd':
		return digit, nil
	case 'D':
		return complement(digit), nil
	case 'w':
		return word, nil
	case 'W':
		return complement(word), nil
	case 's':
		return space, nil
	case 'S':
		return complement(space), nil
	case 't':
		return one('\t'), nil
	case 'n':
		return one('\n'), nil
	case 'r':
		return one('\r'), nil
	case 'f':
		return one('\f'), nil
	case 'v':
		return one('\v'), nil
	case '0':
		return one(0), nil
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
		}
		if r.pos+n > len(r.src) {
			return nil, r.errf("short \\%c escape", c)
		}
		v, err := strconv.ParseUint(r.src[r.pos:r.pos+n], 16, 32)
		if err != nil || (v >= surrogateLo && v <= surrogateHi) {
			return nil, r.errf("bad \\%c escape", c)
		}
		r.pos += n
		return one(rune(v)), nil
	}
	if c < 0x80 && !isWordChar(c) || c == '-' {
		return one(rune(c)), nil // an escaped punctuation character
	}
	return nil, r.errf("escape \\%c is not supported", c)
}

func (r *reParser) class() (string, error) {
	r.pos++
	neg := false
	if r.peek() == '^' {
		neg = true
		r.pos++
	}
	var rs []runeRange
	first := true
	for {
		if r.pos >= len(r.src) {
			return "", r.errf("unterminated [")
		}
		if r.peek() == ']' && !first {
			r.pos++
			break
		}
		first = false
		lo, single, err := r.classAtom()
		if err != nil {
			return "", err
		}
		if single && r.peek() == '-' && r.pos+1 < len(r.src) && r.src[r.pos+1] != ']' {
			r.pos++
			hi, single2, err := r.classAtom()
			if err != nil {
				return "", err
			}
			if !single2 || hi[0].lo < lo[0].lo {
				return "", r.errf("bad range in a class")
			}
			rs = append(rs, runeRange{lo[0].lo, hi[0].lo})
			continue
		}
		rs = append(rs, lo...)
	}
	rs = normalize(rs)
	if neg {
		rs = complement(rs)
	}
	return classGBNF(intersect(jsonSafe, rs)), nil
}

func (r *reParser) classAtom() ([]runeRange, bool, error) {
	if r.peek() == '\\' {
		rs, err := r.escape()
		return rs, err == nil && len(rs) == 1 && rs[0].lo == rs[0].hi, err
	}
	ch, n := utf8.DecodeRuneInString(r.src[r.pos:])
	r.pos += n
	return []runeRange{{ch, ch}}, true, nil
}

// intersect returns the code points in both a and b (both normalized).
func intersect(a, b []runeRange) []runeRange {
	var out []runeRange
	for _, x := range a {
		for _, y := range b {
			lo, hi := max(x.lo, y.lo), min(x.hi, y.hi)
			if lo <= hi {
				out = append(out, runeRange{lo, hi})
			}
		}
	}
	return normalize(out)
}

// charGBNF is the GBNF for one character as it appears in a JSON string.
func charGBNF(c rune) string {
	switch c {
	case '"':
		return `"\\\""`
	case '\\':
		return `"\\\\"`
	case '\n':
		return `"\\n"`
	case '\t':
		return `"\\t"`
	case '\r':
		return `"\\r"`
	}
	if c < 0x20 || c == 0x7F {
		return fmt.Sprintf(`"\\u%04x"`, c)
	}
	return quote(string(c))
}

// classGBNF writes a character class with escaped endpoints; an empty
// class matches nothing.
func classGBNF(rs []runeRange) string {
	if len(rs) == 0 {
		return `[^\x00-\U0010FFFF]`
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, x := range rs {
		fmt.Fprintf(&b, `\U%08X`, x.lo)
		if x.hi != x.lo {
			fmt.Fprintf(&b, `-\U%08X`, x.hi)
		}
	}
	b.WriteByte(']')
	return b.String()
}
