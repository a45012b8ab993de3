package sample

import (
	"fmt"
	"strings"
	"testing"
)

// runStop feeds text split at the given byte offsets and returns everything
// emitted (including the final Flush) and the matcher.
func runStop(stops []string, text string, cuts ...int) (string, *StopMatcher) {
	m := NewStopMatcher(stops...)
	var out strings.Builder
	prev := 0
	for _, c := range append(cuts, len(text)) {
		e, _ := m.Write(text[prev:c])
		out.WriteString(e)
		prev = c
	}
	out.WriteString(m.Flush())
	return out.String(), m
}

func TestStopMatcher(t *testing.T) {
	tests := []struct {
		name    string
		stops   []string
		text    string
		want    string
		matched string
	}{
		{"no stops", nil, "hello world", "hello world", ""},
		{"empty stop ignored", []string{""}, "hello", "hello", ""},
		{"no match", []string{"STOP"}, "a STO b ST", "a STO b ST", ""},
		{"match in middle", []string{"STOP"}, "abc STOP def", "abc ", "STOP"},
		{"match at start", []string{"STOP"}, "STOPxyz", "", "STOP"},
		{"match at end", []string{"<|im_end|>"}, "Hi there.<|im_end|>", "Hi there.", "<|im_end|>"},
		{"partial at end is released on flush", []string{"<|im_end|>"}, "Hi <|im_e", "Hi <|im_e", ""},
		{"earliest of two", []string{"bb", "aa"}, "xaabb", "x", "aa"},
		{"earliest end wins over earlier start", []string{"abc", "b"}, "zabcd", "za", "b"},
		{"same end, longer wins", []string{"c", "abc"}, "zabcd", "z", "abc"},
		{"overlapping prefix", []string{"aab"}, "aaab", "a", "aab"},
		{"repeated partials", []string{"ababc"}, "abababc!", "ab", "ababc"},
		{"multibyte", []string{"。\n"}, "你好。世界。\n再见", "你好。世界", "。\n"},
		{"newline pair", []string{"\n\n"}, "line\nnext\n\nmore", "line\nnext", "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.text)
			// Every single split and every pair of splits.
			for i := 0; i <= n; i++ {
				for j := i; j <= n; j++ {
					got, m := runStop(tt.stops, tt.text, i, j)
					if got != tt.want || m.Matched() != tt.matched || m.Stopped() != (tt.matched != "") {
						t.Fatalf("cuts %d,%d: emitted %q matched %q stopped %v; want %q %q",
							i, j, got, m.Matched(), m.Stopped(), tt.want, tt.matched)
					}
				}
			}
			// Byte by byte.
			cuts := make([]int, 0, n)
			for i := 1; i < n; i++ {
				cuts = append(cuts, i)
			}
			if got, _ := runStop(tt.stops, tt.text, cuts...); got != tt.want {
				t.Fatalf("byte by byte: emitted %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStopMatcherHoldsBack checks what is released before the stream ends.
func TestStopMatcherHoldsBack(t *testing.T) {
	m := NewStopMatcher("</s>", "User:")
	steps := []struct {
		chunk, emit string
		stopped     bool
	}{
		{"Hello <", "Hello ", false},
		{"/", "", false},
		{"x> Us", "</x> ", false},
		{"e", "", false},
		{"r", "", false},
		{": hi", "", true},
		{"more", "", true},
	}
	for i, s := range steps {
		emit, stopped := m.Write(s.chunk)
		if emit != s.emit || stopped != s.stopped {
			t.Fatalf("step %d Write(%q) = %q, %v; want %q, %v", i, s.chunk, emit, stopped, s.emit, s.stopped)
		}
	}
	if f := m.Flush(); f != "" {
		t.Errorf("Flush after stop = %q, want empty", f)
	}
	m.Reset()
	if emit, stopped := m.Write("Use"); emit != "" || stopped {
		t.Errorf("after Reset: Write = %q, %v; want \"\", false", emit, stopped)
	}
	if f := m.Flush(); f != "Use" {
		t.Errorf("Flush = %q, want %q", f, "Use")
	}
}

func FuzzStopMatcher(f *testing.F) {
	f.Add("hello STOP there", "STOP", "ST", 3, 9)
	f.Add("aaab", "aab", "b", 1, 2)
	f.Add("xyz", "", "yz", 0, 0)
	f.Fuzz(func(t *testing.T, text, s1, s2 string, a, b int) {
		if len(text) > 200 || len(s1) > 20 || len(s2) > 20 {
			return
		}
		n := len(text)
		a, b = clamp(a, n), clamp(b, n)
		if a > b {
			a, b = b, a
		}
		stops := []string{s1, s2}
		whole, m1 := runStop(stops, text)
		split, m2 := runStop(stops, text, a, b)
		if whole != split || m1.Matched() != m2.Matched() {
			t.Fatalf("chunking changed the result: %q/%q vs %q/%q", whole, m1.Matched(), split, m2.Matched())
		}
		if !strings.HasPrefix(text, whole) {
			t.Fatalf("emitted %q is not a prefix of %q", whole, text)
		}
		if m1.Stopped() {
			if !strings.HasPrefix(text[len(whole):], m1.Matched()) {
				t.Fatalf("text after emitted part %q does not start with the match %q", text[len(whole):], m1.Matched())
			}
		} else if whole != text {
			t.Fatalf("no stop, but emitted %q of %q", whole, text)
		}
		for _, s := range stops {
			if s != "" && strings.Contains(whole, s) {
				t.Fatalf("emitted %q contains stop %q", whole, s)
			}
		}
	})
}

func clamp(x, n int) int {
	if x < 0 {
		x = -x
	}
	if n == 0 {
		return 0
	}
	return x % (n + 1)
}

func ExampleStopMatcher() {
	m := NewStopMatcher("<|im_end|>")
	for _, chunk := range []string{"The answer", " is 4.<|im", "_end|>ignored"} {
		emit, stopped := m.Write(chunk)
		fmt.Printf("%q %v\n", emit, stopped)
	}
	// Output:
	// "The answer" false
	// " is 4." false
	// "" true
}
