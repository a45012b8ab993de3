package ops

import (
	"math"
	"testing"
)

// TestTableSections checks the IMROPE pair assignment against angles
// formed in float64, and that one shared position gives Table's table
// exactly.
func TestTableSections(t *testing.T) {
	r := mustRope(t, RopeConfig{HeadDim: 64, Dims: 16, Base: 1e7, Neox: true})
	sections := [4]int{3, 3, 2, 0}
	pos := [4]int{5, 7, 11, 13}
	tab := r.TableSections(pos, sections, nil)
	// Pairs 0, 3, 6 read t; 1, 4, 7 read h; 2, 5 read w; none reads e.
	want := []int{5, 7, 11, 5, 7, 11, 5, 7}
	for j, p := range want {
		th := float64(p) * math.Pow(1e7, -2*float64(j)/16)
		if d := math.Abs(float64(tab[j]) - math.Cos(th)); d > 1e-5 {
			t.Errorf("pair %d cos %g, want %g (position %d)", j, tab[j], math.Cos(th), p)
		}
		if d := math.Abs(float64(tab[8+j]) - math.Sin(th)); d > 1e-5 {
			t.Errorf("pair %d sin %g, want %g", j, tab[8+j], math.Sin(th))
		}
	}
	// Sections that leave pairs over: those read the fourth id.
	tab = r.TableSections(pos, [4]int{1, 1, 1, 0}, nil)
	for j, p := range []int{5, 7, 11, 13, 13, 13, 13, 13} {
		th := float64(p) * math.Pow(1e7, -2*float64(j)/16)
		if d := math.Abs(float64(tab[j]) - math.Cos(th)); d > 1e-5 {
			t.Errorf("sections 1,1,1: pair %d cos %g, want %g (position %d)", j, tab[j], math.Cos(th), p)
		}
	}
	for _, p := range []int{0, 1, 37, 4095} {
		a := r.Table(p, nil)
		b := r.TableSections([4]int{p, p, p, 0}, sections, nil)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("position %d: element %d %g ≠ Table's %g", p, i, b[i], a[i])
			}
		}
	}
}
