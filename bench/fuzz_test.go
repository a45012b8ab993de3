package bench

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseInts: any input either fails or gives non-negative numbers that
// print back to an equivalent list.
func FuzzParseInts(f *testing.F) {
	for _, s := range []string{"512", "1,2", " 4096 , 32768", "", ",", "-1", "9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseInts(s)
		if err != nil {
			return
		}
		parts := make([]string, len(v))
		for i, n := range v {
			if n < 0 {
				t.Fatalf("%q: negative %d", s, n)
			}
			parts[i] = strconv.Itoa(n)
		}
		again, err := ParseInts(strings.Join(parts, ","))
		if err != nil || len(again) != len(v) {
			t.Fatalf("%q: %v does not parse back: %v %v", s, v, again, err)
		}
	})
}
