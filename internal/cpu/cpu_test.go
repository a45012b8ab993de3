package cpu

import "testing"

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		v      string
		hw, to int
	}{
		{"", AVX512, AVX512},
		{"generic", AVX512, Generic},
		{"avx2", AVX512, AVX2},
		{"avx512", AVX2, AVX2}, // never above the hardware
		{"AVX2", AVX512, AVX512},
		{"sse", AVX2, AVX2},
	} {
		if got := FromEnv(c.v, c.hw); got != c.to {
			t.Errorf("FromEnv(%q, %s) = %s, want %s", c.v, Name(c.hw), Name(got), Name(c.to))
		}
	}
	if Tier > HW {
		t.Errorf("Tier %s above HW %s", Name(Tier), Name(HW))
	}
}
