package server

import "math"

// jsonObject is a byte-at-a-time recognizer of one JSON object (RFC 8259
// with an object at the top), used to constrain sampling for
// response_format {"type":"json_object"}: before each token, every
// vocabulary entry whose bytes would take the text out of the language of
// JSON-object prefixes is masked, so the answer is always a JSON object
// once it completes. The zero value expects the opening brace (after
// optional whitespace). It is a value type, so trying a token is copying.
type jsonObject struct {
	stack [maxJSONNest]byte // open containers: '{' or '['
	depth int
	st    jstate
	lit   string // rest of a literal being matched (true, false, null)
	hex   int    // \u hex digits still expected
	utf8  int    // UTF-8 continuation bytes still expected in a string
	ws    int    // consecutive whitespace bytes
	done  bool
}

// maxJSONNest bounds nesting; maxJSONSpace bounds runs of whitespace so a
// model cannot idle forever inside the grammar.
const (
	maxJSONNest  = 32
	maxJSONSpace = 16
)

type jstate uint8

const (
	jsStart       jstate = iota // before the top-level '{'
	jsObjFirst                  // after '{': a key or '}'
	jsObjKey                    // after ',' in an object: a key
	jsColon                     // after a key: ':'
	jsValue                     // a value (after ':' or ',' in an array)
	jsArrFirst                  // after '[': a value or ']'
	jsAfter                     // after a value: ',' or the closing bracket
	jsString                    // inside a value string
	jsKeyString                 // inside a key string
	jsEscape                    // after a backslash (value string)
	jsKeyEscape                 // after a backslash (key string)
	jsLit                       // inside true/false/null
	jsNumSign                   // after '-'
	jsNumZero                   // after a leading 0
	jsNumInt                    // in integer digits
	jsNumDot                    // after '.'
	jsNumFrac                   // in fraction digits
	jsNumExp                    // after 'e'
	jsNumExpSign                // after the exponent sign
	jsNumExpDigit               // in exponent digits
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// feed advances over s and reports whether s keeps the text a prefix of
// a JSON object. After a false return the recognizer is unusable.
func (j *jsonObject) feed(s string) bool {
	for i := 0; i < len(s); i++ {
		if !j.byte(s[i]) {
			return false
		}
	}
	return true
}

func (j *jsonObject) byte(c byte) bool {
	if j.done {
		return false
	}
	switch j.st {
	case jsString, jsKeyString:
		return j.stringByte(c)
	case jsEscape, jsKeyEscape:
		in := jsString
		if j.st == jsKeyEscape {
			in = jsKeyString
		}
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			j.hex = 4
		default:
			return false
		}
		j.st = in
		return true
	case jsLit:
		if c != j.lit[0] {
			return false
		}
		j.lit = j.lit[1:]
		if j.lit == "" {
			j.st = jsAfter
		}
		return true
	case jsNumSign, jsNumZero, jsNumInt, jsNumDot, jsNumFrac, jsNumExp, jsNumExpSign, jsNumExpDigit:
		if j.number(c) {
			return true
		}
		switch j.st {
		case jsNumZero, jsNumInt, jsNumFrac, jsNumExpDigit: // a number may end here
			j.st = jsAfter
			return j.byte(c)
		}
		return false
	}
	if isSpace(c) {
		j.ws++
		return j.ws <= maxJSONSpace
	}
	j.ws = 0
	switch j.st {
	case jsStart:
		if c != '{' {
			return false
		}
		return j.push('{', jsObjFirst)
	case jsObjFirst, jsObjKey:
		switch {
		case c == '"':
			j.st = jsKeyString
			return true
		case c == '}' && j.st == jsObjFirst:
			return j.pop()
		}
		return false
	case jsColon:
		if c != ':' {
			return false
		}
		j.st = jsValue
		return true
	case jsValue, jsArrFirst:
		if c == ']' && j.st == jsArrFirst {
			return j.pop()
		}
		return j.value(c)
	case jsAfter:
		top := j.stack[j.depth-1]
		switch {
		case c == ',' && top == '{':
			j.st = jsObjKey
			return true
		case c == ',' && top == '[':
			j.st = jsValue
			return true
		case c == '}' && top == '{', c == ']' && top == '[':
			return j.pop()
		}
	}
	return false
}

// value starts a value with c.
func (j *jsonObject) value(c byte) bool {
	switch {
	case c == '{':
		return j.push('{', jsObjFirst)
	case c == '[':
		return j.push('[', jsArrFirst)
	case c == '"':
		j.st = jsString
	case c == 't':
		j.st, j.lit = jsLit, "rue"
	case c == 'f':
		j.st, j.lit = jsLit, "alse"
	case c == 'n':
		j.st, j.lit = jsLit, "ull"
	case c == '-':
		j.st = jsNumSign
	case c == '0':
		j.st = jsNumZero
	case isDigit(c):
		j.st = jsNumInt
	default:
		return false
	}
	return true
}

// number advances inside a number; false means c does not continue it.
func (j *jsonObject) number(c byte) bool {
	switch j.st {
	case jsNumSign:
		switch {
		case c == '0':
			j.st = jsNumZero
		case isDigit(c):
			j.st = jsNumInt
		default:
			return false
		}
	case jsNumZero, jsNumInt:
		switch {
		case isDigit(c) && j.st == jsNumInt:
		case c == '.':
			j.st = jsNumDot
		case c == 'e' || c == 'E':
			j.st = jsNumExp
		default:
			return false
		}
	case jsNumDot, jsNumFrac:
		switch {
		case isDigit(c):
			j.st = jsNumFrac
		case (c == 'e' || c == 'E') && j.st == jsNumFrac:
			j.st = jsNumExp
		default:
			return false
		}
	case jsNumExp:
		switch {
		case c == '+' || c == '-':
			j.st = jsNumExpSign
		case isDigit(c):
			j.st = jsNumExpDigit
		default:
			return false
		}
	case jsNumExpSign, jsNumExpDigit:
		if !isDigit(c) {
			return false
		}
		j.st = jsNumExpDigit
	}
	return true
}

// stringByte advances inside a string, checking escapes, \u digits and
// UTF-8 structure.
func (j *jsonObject) stringByte(c byte) bool {
	switch {
	case j.hex > 0:
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
		j.hex--
		return true
	case j.utf8 > 0:
		if c&0xC0 != 0x80 {
			return false
		}
		j.utf8--
		return true
	case c == '"':
		if j.st == jsKeyString {
			j.st = jsColon
		} else {
			j.st = jsAfter
		}
		return true
	case c == '\\':
		if j.st == jsKeyString {
			j.st = jsKeyEscape
		} else {
			j.st = jsEscape
		}
		return true
	case c < 0x20:
		return false
	case c < 0x80:
		return true
	case c >= 0xC2 && c <= 0xDF:
		j.utf8 = 1
	case c >= 0xE0 && c <= 0xEF:
		j.utf8 = 2
	case c >= 0xF0 && c <= 0xF4:
		j.utf8 = 3
	default:
		return false
	}
	return true
}

func (j *jsonObject) push(b byte, next jstate) bool {
	if j.depth == maxJSONNest {
		return false
	}
	j.stack[j.depth] = b
	j.depth++
	j.st = next
	return true
}

func (j *jsonObject) pop() bool {
	j.depth--
	j.st = jsAfter
	if j.depth == 0 {
		j.done = true
	}
	return true
}

// mask sets to -Inf the logits of tokens that cannot come next: tokens
// with no text (control tokens) and tokens whose bytes leave the grammar.
// pieces[id] is the text of token id. It reports whether any token remains.
func (j *jsonObject) mask(logits []float32, pieces []string) bool {
	any := false
	for id := range logits {
		ok := false
		if id < len(pieces) && pieces[id] != "" {
			try := *j
			ok = try.feed(pieces[id])
		}
		if ok {
			any = true
		} else {
			logits[id] = float32(math.Inf(-1))
		}
	}
	return any
}
