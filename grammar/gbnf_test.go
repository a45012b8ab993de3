package grammar

import (
	"errors"
	"strings"
	"testing"
)

// llama.cpp's example grammars (grammars/*.gbnf), written out from their
// published definitions.
const (
	arithmeticGBNF = `root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
`
	jsonGBNF = `root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
`
	listGBNF = `root ::= item+

# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
`
	chessGBNF = `# Specifies chess moves as a list in algebraic notation, using PGN conventions

# Force first move to "1. ", then any 1-2 digit number after, relying on model to follow the pattern
root    ::= "1. " move " " move "\n" ([1-9] [0-9]? ". " move " " move "\n")+
move    ::= (pawn | nonpawn | castle) [+#]?

# piece type, optional file/rank, optional capture, dest file & rank
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]

# optional file & capture, dest file & rank, optional promotion
pawn    ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBKQR])?

castle  ::= "O-O" "-O"?
`
)

func TestExampleGrammars(t *testing.T) {
	tests := []struct {
		name, gbnf string
		accept     []string
		reject     []string
	}{
		{"arithmetic", arithmeticGBNF,
			[]string{"1+2=3\n", "x = 4\n", "(a+b)*c= d\n", "a=1\nb=2\n", "foo_1 /7 =bar\n"},
			[]string{"", "1+2=3", "1++2=3\n", "A=1\n", "1 / 2=3\n", "_x=1\n"}},
		{"json", jsonGBNF,
			[]string{`{}`, `{"a":1}`, `{"a": [1, 2.5, -3e1], "b": {"c": null}}`, `{"s": "\u00e9\n"}`, "{\n  \"k\": true}", `{"u":"é"}`},
			[]string{`[]`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{'a':1}`, `{"a":"\/"}`, "{\"a\":\"\x01\"}", `{"a":1}}`}},
		{"list", listGBNF,
			[]string{"- a\n", "- milk\n- eggs\n", "- ünïcödé 日本\n"},
			[]string{"", "- \n", "-a\n", "- a", "- a\r\n", "- a\u2028b\n"}},
		{"chess", chessGBNF,
			[]string{"1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O Qxd8+\n", "1. e4 e5\n12. exd8=Q# O-O-O\n"},
			[]string{"1. e4 e5\n", "1. e9 e5\n2. a1 a2\n", "1. e4 e5\n2. Pe4 e5\n", "2. e4 e5\n3. a3 a4\n", "1. e4  e5\n2. a3 a4\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(tt.gbnf)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.accept {
				if !g.Match(s) {
					t.Errorf("rejects %q", s)
				}
				for i := range len(s) {
					if !g.MatchPrefix(s[:i]) {
						t.Errorf("rejects the prefix %q of %q", s[:i], s)
						break
					}
				}
			}
			for _, s := range tt.reject {
				if g.Match(s) {
					t.Errorf("accepts %q", s)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no root", `a ::= "x"`, `rule "root": the grammar has no root rule`},
		{"undefined", `root ::= a`, `rule "a": is used but never defined`},
		{"left recursion", `root ::= root "x" | "y"`, `left-recursive`},
		{"nullable left recursion", "root ::= a root \"x\" | \"y\"\na ::= \"z\"?", `left-recursive`},
		{"no ::=", `root = "x"`, "expected ::="},
		{"unterminated", `root ::= "x`, "unterminated string"},
		{"class", `root ::= [a-`, "unterminated character class"},
		{"escape", `root ::= "\q"`, `unknown escape \q`},
		{"hex", `root ::= "\x4"`, "expected 2 hex digits"},
		{"repeat nothing", `root ::= *`, "nothing before it"},
		{"bad range", `root ::= "a"{3,2}`, "maximum below"},
		{"huge repeat", `root ::= "a"{9999}`, "above 2000"},
		{"twice", "root ::= \"a\"\nroot ::= \"b\"", "defined twice"},
		{"token", `root ::= <think>`, "token references"},
		{"paren", `root ::= ("a"`, "expected )"},
		{"trailing", `root ::= "a" )`, "end of the line"},
		{"surrogate", `root ::= "\uD800"`, "not a Unicode scalar"},
		{"blowup", `root ::= "` + strings.Repeat("a", 600) + `"{2000}`, "too large"},
		{"empty repeat", `root ::= "a" ""*`, "nothing before it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, want an error containing %q", tt.src, err, tt.want)
			}
			var se *SyntaxError
			var re *RuleError
			if !errors.As(err, &se) && !errors.As(err, &re) {
				t.Errorf("error %T is neither a SyntaxError nor a RuleError", err)
			}
		})
	}
}

func TestRepetition(t *testing.T) {
	tests := []struct {
		gbnf   string
		accept []string
		reject []string
	}{
		{`root ::= "ab"{2}`, []string{"abab"}, []string{"ab", "ababab", "aab"}},
		{`root ::= "a"{2,}`, []string{"aa", "aaaaa"}, []string{"a", ""}},
		{`root ::= "a"{1,3} "b"`, []string{"ab", "aaab"}, []string{"b", "aaaab"}},
		{`root ::= "a"{0,2}`, []string{"", "a", "aa"}, []string{"aaa"}},
		{`root ::= ("x" | "y")+ "."`, []string{"x.", "xyyx."}, []string{".", "xz."}},
		{`root ::= [^a-z]`, []string{"A", "é", "日", "\U0001F600"}, []string{"a", "q", "AB", "\xff"}},
		{`root ::= . "!"`, []string{"a!", "日!"}, []string{"!", "\xe6\x97!"}},
		{`root ::= [\u00e0-\u00ff\x41]`, []string{"A", "à", "ÿ"}, []string{"B", "ß"}},
		{"root ::= \"a\" b\nb ::= \"\" | \"b\"", []string{"a", "ab"}, []string{"abb"}},
	}
	for _, tt := range tests {
		g, err := Parse(tt.gbnf)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.gbnf, err)
			continue
		}
		for _, s := range tt.accept {
			if !g.Match(s) {
				t.Errorf("%s rejects %q", tt.gbnf, s)
			}
		}
		for _, s := range tt.reject {
			if g.Match(s) {
				t.Errorf("%s accepts %q", tt.gbnf, s)
			}
		}
	}
}
