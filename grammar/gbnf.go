package grammar

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on a GBNF text, as llama.cpp sets them, so that a hostile grammar
// cannot make the parser allocate without bound.
const (
	maxRepetition = 2000    // largest m or n in {m,n}
	maxSymbols    = 1 << 20 // symbols in all rules after expanding repetitions
	maxNesting    = 256     // parentheses
)

// Parse compiles a grammar in llama.cpp's GBNF: rules `name ::= alternatives`,
// one per line (a rule continues on the next line only inside parentheses
// or after `|`), with string literals, character classes `[a-z]` and
// `[^...]`, `.` for any character, groups, `*`, `+`, `?`, `{m}`, `{m,}`,
// `{m,n}` and `#` comments. The start rule is "root". Token references
// (`<...>`) are not supported.
func Parse(src string) (*Grammar, error) {
	p := &parser{src: src, b: newBuilder()}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.b.finish("root")
}

type parser struct {
	src     string
	pos     int
	b       *builder
	nsym    int
	nesting int
}

// parseErr is a SyntaxError at the current position, carried by panic
// within the parser and recovered in parse.
type parseErr struct{ err *SyntaxError }

func (p *parser) fail(format string, args ...any) {
	line := 1 + strings.Count(p.src[:p.pos], "\n")
	col := 1 + utf8.RuneCountInString(p.src[strings.LastIndexByte(p.src[:p.pos], '\n')+1:p.pos])
	panic(parseErr{&SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}})
}

func (p *parser) parse() (err error) {
	defer func() {
		if v := recover(); v != nil {
			pe, ok := v.(parseErr)
			if !ok {
				panic(v)
			}
			err = pe.err
		}
	}()
	p.space(true)
	for p.pos < len(p.src) {
		p.rule()
	}
	return nil
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) space(newlineOK bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		case newlineOK && (c == '\n' || c == '\r'):
			p.pos++
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		p.fail("expected a rule name")
	}
	return p.src[start:p.pos]
}

func (p *parser) rule() {
	name := p.name()
	id := p.b.rule(name)
	if p.b.defined[id] {
		p.fail("rule %q is defined twice", name)
	}
	p.space(false)
	if !strings.HasPrefix(p.src[p.pos:], "::=") {
		p.fail("expected ::= after the rule name %q", name)
	}
	p.pos += 3
	p.space(true)
	p.b.define(id, p.alternates(name, false))
	switch p.peek() {
	case '\r':
		p.pos++
		if p.peek() == '\n' {
			p.pos++
		}
	case '\n':
		p.pos++
	case 0:
	default:
		p.fail("expected the end of the line, found %q", p.peek())
	}
	p.space(true)
}

func (p *parser) alternates(name string, nested bool) [][]sym {
	alts := [][]sym{p.sequence(name, nested)}
	for p.peek() == '|' {
		p.pos++
		p.space(true)
		alts = append(alts, p.sequence(name, nested))
	}
	return alts
}

func (p *parser) grow(n int) {
	p.nsym += n
	if p.nsym > maxSymbols {
		p.fail("the grammar is too large (more than %d symbols after expanding repetitions)", maxSymbols)
	}
}

func (p *parser) sequence(name string, nested bool) []sym {
	var seq []sym
	last := -1 // start of the last item, for repetition operators
	for p.pos < len(p.src) {
		start := len(seq)
		switch c := p.peek(); {
		case c == '"':
			p.pos++
			for p.peek() != '"' {
				if p.pos >= len(p.src) {
					p.fail("unterminated string literal")
				}
				var buf [utf8.UTFMax]byte
				n := utf8.EncodeRune(buf[:], p.char())
				seq = append(seq, p.b.literal(string(buf[:n]))...)
			}
			p.pos++
			if len(seq) == start { // "" is the empty sequence: nothing to repeat
				last = -1
				p.space(nested)
				continue
			}
		case c == '[':
			p.pos++
			neg := false
			if p.peek() == '^' {
				neg = true
				p.pos++
			}
			var rs []runeRange
			for p.peek() != ']' {
				if p.pos >= len(p.src) {
					p.fail("unterminated character class")
				}
				lo := p.char()
				hi := lo
				if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
					p.pos++
					hi = p.char()
				}
				rs = append(rs, runeRange{lo, hi})
			}
			p.pos++
			rs = normalize(rs)
			if neg {
				rs = complement(rs)
			}
			seq = append(seq, p.b.class(name, rs))
		case c == '.':
			p.pos++
			seq = append(seq, p.b.class(name, []runeRange{{0, surrogateLo - 1}, {surrogateHi + 1, utf8.MaxRune}}))
		case c == '<' || c == '!':
			p.fail("token references (<...>) are not supported")
		case isWordChar(c):
			id := p.b.rule(p.name())
			if _, ok := p.b.firstUse[id]; !ok {
				p.b.firstUse[id] = name
			}
			seq = append(seq, ref(id))
		case c == '(':
			p.pos++
			if p.nesting++; p.nesting > maxNesting {
				p.fail("parentheses nested more than %d deep", maxNesting)
			}
			p.space(true)
			id := p.b.fresh(name)
			p.b.define(id, p.alternates(name, true))
			p.nesting--
			if p.peek() != ')' {
				p.fail("expected )")
			}
			p.pos++
			seq = append(seq, ref(id))
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last < 0 {
				p.fail("%q has nothing before it to repeat", c)
			}
			lo, hi := p.repetition()
			seq = p.repeat(name, seq, last, lo, hi)
			p.space(nested)
			continue
		default:
			return seq
		}
		p.grow(len(seq) - start)
		last = start
		p.space(nested)
	}
	return seq
}

// repetition reads *, +, ? or {m}, {m,}, {m,n}; hi < 0 means no limit.
func (p *parser) repetition() (lo, hi int) {
	c := p.peek()
	p.pos++
	switch c {
	case '*':
		return 0, -1
	case '+':
		return 1, -1
	case '?':
		return 0, 1
	}
	p.space(true)
	lo = p.int()
	p.space(true)
	switch p.peek() {
	case '}':
		p.pos++
		return lo, lo
	case ',':
		p.pos++
		p.space(true)
		hi = -1
		if c := p.peek(); c >= '0' && c <= '9' {
			hi = p.int()
			p.space(true)
			if hi < lo {
				p.fail("repetition {%d,%d} has its maximum below its minimum", lo, hi)
			}
		}
		if p.peek() != '}' {
			p.fail("expected }")
		}
		p.pos++
		return lo, hi
	}
	p.fail("expected , or } in a repetition")
	return 0, 0
}

func (p *parser) int() int {
	start := p.pos
	n := 0
	for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
		n = n*10 + int(c-'0')
		p.pos++
		if n > maxRepetition {
			p.fail("repetition count above %d", maxRepetition)
		}
	}
	if p.pos == start {
		p.fail("expected a number")
	}
	return n
}

// repeat rewrites seq[last:] as it repeated lo to hi times (hi < 0: no
// limit), with helper rules for the optional copies: X{0,} is R ::= X R | "",
// and each optional copy beyond lo nests one level, R_k ::= X R_(k-1) | "".
func (p *parser) repeat(name string, seq []sym, last, lo, hi int) []sym {
	item := append([]sym(nil), seq[last:]...)
	seq = seq[:last]
	copies := lo
	if hi > lo {
		copies = hi
	}
	p.grow(len(item) * (copies + 1))
	for range lo {
		seq = append(seq, item...)
	}
	switch {
	case hi < 0:
		id := p.b.fresh(name)
		p.b.define(id, [][]sym{append(append([]sym(nil), item...), ref(id)), {}})
		seq = append(seq, ref(id))
	case hi > lo:
		prev := -1
		for range hi - lo {
			id := p.b.fresh(name)
			alt := append([]sym(nil), item...)
			if prev >= 0 {
				alt = append(alt, ref(prev))
			}
			p.b.define(id, [][]sym{alt, {}})
			prev = id
		}
		seq = append(seq, ref(prev))
	}
	return seq
}

// char reads one character of a literal or class: a UTF-8 character or an
// escape (\x, \u, \U, \t, \r, \n, \\, \", \[, \]).
func (p *parser) char() rune {
	if p.peek() != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n <= 1 {
			p.fail("invalid UTF-8")
		}
		p.pos += n
		return r
	}
	if p.pos+1 >= len(p.src) {
		p.fail("unterminated escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 'x':
		return p.hex(2)
	case 'u':
		return p.hex(4)
	case 'U':
		return p.hex(8)
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'n':
		return '\n'
	case '\\', '"', '[', ']':
		return rune(c)
	}
	p.pos -= 2
	p.fail("unknown escape \\%c", c)
	return 0
}

func (p *parser) hex(n int) rune {
	var v rune
	for i := range n {
		c := p.peek()
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			p.fail("expected %d hex digits, found %d", n, i)
		}
		v = v<<4 | rune(d)
		p.pos++
	}
	if v > utf8.MaxRune || (v >= surrogateLo && v <= surrogateHi) {
		p.fail("\\U%08X is not a Unicode scalar value", v)
	}
	return v
}
