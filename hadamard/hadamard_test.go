package hadamard

import (
	"errors"
	"math"
	"math/bits"
	"testing"
)

// valid returns a small well-formed declaration: block 4, widths 8 and 4.
func valid() *Declaration {
	return &Declaration{
		Version: 1, BlockSize: 4, Transform: Transform, Axis: Axis,
		SignMode:    SignExplicit,
		SignWidths:  []int{8, 4},
		SignValues:  []int8{1, -1, 1, 1, -1, -1, 1, -1, -1, 1, 1, -1},
		WeightNames: []string{"a.weight", "b.weight"}, InverseWeightNames: []string{"token_embd.weight"},
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(d *Declaration)
		ok   bool
	}{
		{"valid", func(*Declaration) {}, true},
		{"identity", func(d *Declaration) { d.SignMode, d.SignWidths, d.SignValues = SignIdentity, nil, nil }, true},
		{"only inverse names", func(d *Declaration) { d.WeightNames = nil }, true},
		{"version 0", func(d *Declaration) { d.Version = 0 }, false},
		{"version 2", func(d *Declaration) { d.Version = 2 }, false},
		{"block 0", func(d *Declaration) { d.BlockSize = 0 }, false},
		{"block 6", func(d *Declaration) { d.BlockSize = 6 }, false},
		{"block too large", func(d *Declaration) { d.BlockSize = 1 << 20 }, false},
		{"transform", func(d *Declaration) { d.Transform = "hadamard" }, false},
		{"axis", func(d *Declaration) { d.Axis = "output" }, false},
		{"sign mode", func(d *Declaration) { d.SignMode = "random" }, false},
		{"identity with values", func(d *Declaration) { d.SignMode = SignIdentity }, false},
		{"explicit without widths", func(d *Declaration) { d.SignWidths, d.SignValues = nil, nil }, false},
		{"width not a multiple", func(d *Declaration) { d.SignWidths = []int{6, 6} }, false},
		{"width zero", func(d *Declaration) { d.SignWidths = []int{0, 12} }, false},
		{"width negative", func(d *Declaration) { d.SignWidths = []int{16, -4} }, false},
		{"width duplicate", func(d *Declaration) { d.SignWidths = []int{4, 4}; d.SignValues = d.SignValues[:8] }, false},
		{"too few values", func(d *Declaration) { d.SignValues = d.SignValues[:11] }, false},
		{"too many values", func(d *Declaration) { d.SignValues = append(d.SignValues, 1) }, false},
		{"value 0", func(d *Declaration) { d.SignValues[3] = 0 }, false},
		{"value 2", func(d *Declaration) { d.SignValues[3] = 2 }, false},
		{"no names", func(d *Declaration) { d.WeightNames, d.InverseWeightNames = nil, nil }, false},
		{"empty name", func(d *Declaration) { d.WeightNames[1] = "" }, false},
		{"name twice", func(d *Declaration) { d.InverseWeightNames = []string{"a.weight"} }, false},
	}
	for _, tc := range cases {
		d := valid()
		tc.edit(d)
		err := d.Validate()
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want one wrapping ErrInvalid", tc.name, err)
		}
	}
}

func TestSigns(t *testing.T) {
	d := valid()
	s, err := d.Signs(4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{-1, 1, 1, -1}
	for i := range want {
		if s[i] != want[i] {
			t.Fatalf("Signs(4) = %v, want %v", s, want)
		}
	}
	for _, w := range []int{0, 6, 12, -4} {
		if _, err := d.Signs(w); !errors.Is(err, ErrWidth) {
			t.Errorf("Signs(%d): error %v, want ErrWidth", w, err)
		}
	}
	d.SignMode, d.SignWidths, d.SignValues = SignIdentity, nil, nil
	if s, err := d.Signs(12); err != nil || s != nil {
		t.Errorf("identity Signs(12) = %v, %v; want nil, nil", s, err)
	}
}

// TestForwardMatchesMatrix compares Forward with the explicit product
// blockdiag(H_B)·diag(s)·x, H_B[i][j] = (−1)^popcount(i&j)/√B, and checks
// that Inverse undoes it.
func TestForwardMatchesMatrix(t *testing.T) {
	d := valid()
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Prepare(8); err != nil {
		t.Fatal(err)
	}
	s, _ := d.Signs(8)
	x := []float32{0.5, -1, 2, 3, 0.25, -0.75, 1.5, -2, 1, 2, 3, 4, 5, 6, 7, 8} // two rows
	got := append([]float32(nil), x...)
	if err := r.Forward(got, 8); err != nil {
		t.Fatal(err)
	}
	B := d.BlockSize
	for row := 0; row < len(x); row += 8 {
		for b := 0; b < 8; b += B {
			for i := range B {
				var want float64
				for j := range B {
					h := 1 / math.Sqrt(float64(B))
					if bits.OnesCount(uint(i&j))%2 == 1 {
						h = -h
					}
					want += h * float64(s[b+j]*x[row+b+j])
				}
				if math.Abs(want-float64(got[row+b+i])) > 1e-6 {
					t.Fatalf("row %d elem %d: got %g, want %g", row/8, b+i, got[row+b+i], want)
				}
			}
		}
	}
	if err := r.Inverse(got, 8); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Abs(float64(got[i]-x[i])) > 1e-6 {
			t.Fatalf("Inverse(Forward(x))[%d] = %g, want %g", i, got[i], x[i])
		}
	}
}

func TestRotationErrors(t *testing.T) {
	r, err := New(valid())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Forward(make([]float32, 8), 8); !errors.Is(err, ErrWidth) {
		t.Errorf("unprepared width: %v", err)
	}
	if err := r.Prepare(16); !errors.Is(err, ErrWidth) {
		t.Errorf("Prepare(16) without signs: %v", err)
	}
	if err := r.Prepare(8); err != nil {
		t.Fatal(err)
	}
	if err := r.Forward(make([]float32, 12), 8); !errors.Is(err, ErrWidth) {
		t.Errorf("partial row: %v", err)
	}
	bad := valid()
	bad.Version = 3
	if _, err := New(bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("New(invalid): %v", err)
	}
}

// TestSite checks that a site hands unrotated weights the input itself and
// rotated ones a rotated copy, computed once per Bind and permuted first
// when asked.
func TestSite(t *testing.T) {
	r, _ := New(valid())
	r.Prepare(4)
	x := []float32{1, 2, 3, 4}
	var s Site
	s.Bind(r, x, 4)
	if in, _ := s.Input(false); &in[0] != &x[0] {
		t.Error("unrotated input is not the bound slice")
	}
	a, err := s.Input(true)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), x...)
	r.Forward(want, 4)
	for i := range want {
		if a[i] != want[i] {
			t.Fatalf("rotated input %v, want %v", a, want)
		}
	}
	a[0] = 100 // a second reader gets the memoised copy, not a new one
	if b, _ := s.Input(true); b[0] != 100 {
		t.Error("rotated input recomputed within one Bind")
	}
	if x[0] != 1 {
		t.Error("rotation changed the bound input")
	}
	s.Permute = func(dst, src []float32) {
		for i := range src {
			dst[len(src)-1-i] = src[i]
		}
	}
	s.Bind(r, x, 4)
	got, _ := s.Input(true)
	rev := []float32{4, 3, 2, 1}
	r.Forward(rev, 4)
	for i := range rev {
		if got[i] != rev[i] {
			t.Fatalf("permuted rotation %v, want %v", got, rev)
		}
	}
	var none Site
	none.Bind(nil, x, 4)
	if _, err := none.Input(true); !errors.Is(err, ErrInvalid) {
		t.Errorf("rotated input without a rotation: %v", err)
	}
}
