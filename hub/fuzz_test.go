package hub

import (
	"strings"
	"testing"
)

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in          string
		start, size int64
		ok          bool
	}{
		{"bytes 100-999/1000", 100, 1000, true},
		{"bytes 0-0/1", 0, 1, true},
		{"bytes 5-9/*", 5, -1, true},
		{"bytes 100-999/999", 0, 0, false}, // end past the size
		{"bytes 9-5/10", 0, 0, false},
		{"bytes -5/10", 0, 0, false},
		{"items 0-1/2", 0, 0, false},
		{"bytes 0-1", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, size, ok := parseContentRange(tc.in)
		if ok != tc.ok || (ok && (start != tc.start || size != tc.size)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v", tc.in, start, size, ok)
		}
	}
}

func TestNextLink(t *testing.T) {
	for in, want := range map[string]string{
		`<https://h/api/models/a/b/tree/main?cursor=x>; rel="next"`: "https://h/api/models/a/b/tree/main?cursor=x",
		`<https://h/p1>; rel="prev", <https://h/p3>; rel="next"`:    "https://h/p3",
		`<https://h/p3>; title="x"; rel=next`:                       "https://h/p3",
		`<https://h/p1>; rel="prev"`:                                "",
		`garbage`:                                                   "",
		`https://h/p3; rel="next"`:                                  "",
	} {
		if got := nextLink([]string{in}); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", in, got, want)
		}
	}
}

// The header parsers take whatever a server sends.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{"bytes 100-999/1000", "bytes 5-9/*", `<https://h/p>; rel="next"`, "bytes 9223372036854775807-9223372036854775807/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if start, size, ok := parseContentRange(s); ok && (start < 0 || (size != -1 && size <= start)) {
			t.Errorf("parseContentRange(%q) = %d, %d: inconsistent", s, start, size)
		}
		if l := nextLink([]string{s}); l != "" && !strings.Contains(s, "<"+l+">") {
			t.Errorf("nextLink(%q) = %q: not a bracketed target of the header", s, l)
		}
		if e := normalizeETag(s); strings.HasPrefix(e, `"`) || strings.HasSuffix(e, `"`) {
			t.Errorf("normalizeETag(%q) = %q: quotes left", s, e)
		}
	})
}
