package chat

import (
	"fmt"
	"strings"
	"testing"
)

func TestSplitReasoning(t *testing.T) {
	tests := []struct {
		text, reasoning, content string
	}{
		{"<think>\nLet me think.\n</think>\n\nThe answer is 4.", "Let me think.", "The answer is 4."},
		{"Just content.\n", "", "Just content.\n"},
		{"\n\nno tags ", "", "\n\nno tags "},
		{"\n\n<think>a</think>b", "a", "b"},
		{"<think>\n\n</think>\n\nHi", "", "Hi"},
		{"<think>\nstill thinking \n", "still thinking", ""},
		{"prompt opened it\n</think>\n\nDone.", "prompt opened it", "Done."},
		{"<think>a</think>b<think>c</think>", "a", "b<think>c</think>"},
		{"<think>思考</think>答案", "思考", "答案"},
		{"", "", ""},
	}
	for _, tt := range tests {
		r, c := SplitReasoning(tt.text)
		if r != tt.reasoning || c != tt.content {
			t.Errorf("SplitReasoning(%q) = %q, %q; want %q, %q", tt.text, r, c, tt.reasoning, tt.content)
		}
	}
}

// runReasoning feeds text split at the given offsets and collects the
// reasoning and content of every Write and the final Flush.
func runReasoning(start bool, text string, cuts ...int) (reasoning, content string) {
	p := ReasoningParser{StartInReasoning: start}
	var r, c strings.Builder
	prev := 0
	for _, cut := range append(cuts, len(text)) {
		dr, dc := p.Write(text[prev:cut])
		r.WriteString(dr)
		c.WriteString(dc)
		prev = cut
	}
	dr, dc := p.Flush()
	r.WriteString(dr)
	c.WriteString(dc)
	return r.String(), c.String()
}

var reasoningTests = []struct {
	name                     string
	start                    bool
	text, reasoning, content string
}{
	{"think block", false, "<think>\nLet me think.\n</think>\n\nThe answer is 4.", "Let me think.", "The answer is 4."},
	{"no think block", false, "Just content.\n", "", "Just content.\n"},
	{"whitespace before think", false, "\n\n<think>a</think>b", "a", "b"},
	{"whitespace, no think", false, "  hi", "", "  hi"},
	{"empty think", false, "<think>\n\n</think>\n\nHi", "", "Hi"},
	{"unclosed", false, "<think>\nstill thinking \n", "still thinking", ""},
	{"partial close tag at end", false, "<think>abc</thi", "abc</thi", ""},
	{"whitespace then partial close tag", false, "<think>abc\n</th", "abc\n</th", ""},
	{"not a think tag", false, "<thinking>x", "", "<thinking>x"},
	{"only a partial open tag", false, "<thi", "", "<thi"},
	{"inner whitespace kept", false, "<think>a\n\n b \n</think>c  \n", "a\n\n b", "c  \n"},
	{"almost a close tag inside", false, "<think>a</thinker> b</think>c", "a</thinker> b", "c"},
	{"second think is content", false, "<think>a</think>b<think>c</think>", "a", "b<think>c</think>"},
	{"close tag without open is content", false, "abc</think>def", "", "abc</think>def"},
	{"unicode", false, "<think>思考</think>答案", "思考", "答案"},
	{"empty", false, "", "", ""},
	{"prompt opened the block", true, "\nReasoning here.\n</think>\n\nContent.", "Reasoning here.", "Content."},
	{"prompt opened, unclosed", true, "abc", "abc", ""},
	{"prompt opened, closed at once", true, "</think>x", "", "x"},
	{"prompt opened, only whitespace", true, " \n ", "", ""},
	{"prompt opened, empty", true, "", "", ""},
}

// TestReasoningParser checks every way of cutting the text into one, two or
// three chunks, and byte by byte, against the expected split.
func TestReasoningParser(t *testing.T) {
	for _, tt := range reasoningTests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.text)
			check := func(what string, r, c string) {
				t.Helper()
				if r != tt.reasoning || c != tt.content {
					t.Fatalf("%s: got %q, %q; want %q, %q", what, r, c, tt.reasoning, tt.content)
				}
			}
			for i := 0; i <= n; i++ {
				for j := i; j <= n; j++ {
					r, c := runReasoning(tt.start, tt.text, i, j)
					check(fmt.Sprintf("cuts %d,%d", i, j), r, c)
				}
			}
			cuts := make([]int, 0, n)
			for i := 1; i < n; i++ {
				cuts = append(cuts, i)
			}
			r, c := runReasoning(tt.start, tt.text, cuts...)
			check("byte by byte", r, c)

			// The non-streaming split agrees whenever the text itself says
			// where the reasoning starts.
			if !tt.start && (strings.HasPrefix(trimLeftSpace(tt.text), thinkOpen) || !strings.Contains(tt.text, thinkClose)) {
				r, c := SplitReasoning(tt.text)
				check("SplitReasoning", r, c)
			}
		})
	}
}

// TestReasoningParserStreams checks that text is released as soon as it is
// known, not only at Flush.
func TestReasoningParserStreams(t *testing.T) {
	var p ReasoningParser
	steps := []struct{ chunk, reasoning, content string }{
		{"<th", "", ""},
		{"ink>\n", "", ""},
		{"Step one", "Step one", ""},
		{".\n", ".", ""},
		{"Step two.</", "\nStep two.", ""},
		{"think>", "", ""},
		{"\n\n", "", ""},
		{"Answer", "", "Answer"},
		{" <think>", "", " <think>"},
	}
	for i, s := range steps {
		r, c := p.Write(s.chunk)
		if r != s.reasoning || c != s.content {
			t.Fatalf("step %d Write(%q) = %q, %q; want %q, %q", i, s.chunk, r, c, s.reasoning, s.content)
		}
	}
	if r, c := p.Flush(); r != "" || c != "" {
		t.Errorf("Flush = %q, %q; want nothing", r, c)
	}
}

func FuzzReasoningParser(f *testing.F) {
	for _, tt := range reasoningTests {
		f.Add(tt.text, tt.start, 1, 3)
	}
	f.Fuzz(func(t *testing.T, text string, start bool, a, b int) {
		if len(text) > 300 {
			return
		}
		n := len(text)
		a, b = cut(a, n), cut(b, n)
		if a > b {
			a, b = b, a
		}
		r1, c1 := runReasoning(start, text)
		r2, c2 := runReasoning(start, text, a, b)
		if r1 != r2 || c1 != c2 {
			t.Fatalf("cuts %d,%d changed the split: %q,%q vs %q,%q", a, b, r1, c1, r2, c2)
		}
		if !start && (strings.HasPrefix(trimLeftSpace(text), thinkOpen) || !strings.Contains(text, thinkClose)) {
			if r, c := SplitReasoning(text); r != r1 || c != c1 {
				t.Fatalf("SplitReasoning = %q,%q; parser %q,%q", r, c, r1, c1)
			}
		}
		if len(r1)+len(c1) > n {
			t.Fatalf("output longer than input: %q,%q from %q", r1, c1, text)
		}
	})
}

// cut maps a fuzzed int to an offset in [0, n].
func cut(x, n int) int {
	if x < 0 {
		x = -x
	}
	if x < 0 || n == 0 { // -MinInt is still negative
		return 0
	}
	return x % (n + 1)
}

func ExampleReasoningParser() {
	// A Qwen3.5 prompt ends with "<think>\n", so the reply starts inside
	// the reasoning.
	p := ReasoningParser{StartInReasoning: true}
	for _, chunk := range []string{"The user", " greets me.\n</th", "ink>\n\nHello", "!"} {
		r, c := p.Write(chunk)
		fmt.Printf("reasoning %q content %q\n", r, c)
	}
	// Output:
	// reasoning "The user" content ""
	// reasoning " greets me." content ""
	// reasoning "" content "Hello"
	// reasoning "" content "!"
}
