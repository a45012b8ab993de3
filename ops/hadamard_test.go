package ops

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// hadamardMatrix returns H_B[i][j] = (−1)^popcount(i&j)/√B, the reference
// twin of the butterfly transform.
func hadamardMatrix(b int) [][]float64 {
	h := make([][]float64, b)
	s := 1 / math.Sqrt(float64(b))
	for i := range h {
		h[i] = make([]float64, b)
		for j := range h[i] {
			h[i][j] = s
			if bits.OnesCount(uint(i&j))%2 == 1 {
				h[i][j] = -s
			}
		}
	}
	return h
}

// hadamardRef applies blockdiag(H_B) to x in float64.
func hadamardRef(x []float64, b int) {
	h := hadamardMatrix(b)
	tmp := make([]float64, b)
	for off := 0; off < len(x); off += b {
		blk := x[off : off+b]
		for i := range tmp {
			var s float64
			for j, v := range blk {
				s += h[i][j] * v
			}
			tmp[i] = s
		}
		copy(blk, tmp)
	}
}

func randSigns(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
		if r.IntN(2) == 0 {
			s[i] = -1
		}
	}
	return s
}

func TestHadamardMatrixIsOrthonormal(t *testing.T) {
	// H·H = I: the reference itself is right before anything is compared to it.
	for _, b := range []int{1, 2, 8, 32} {
		h := hadamardMatrix(b)
		for i := range b {
			for j := range b {
				var s float64
				for k := range b {
					s += h[i][k] * h[k][j]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(s-want) > 1e-12 {
					t.Fatalf("B=%d: (H·H)[%d][%d] = %v", b, i, j, s)
				}
			}
		}
	}
}

func TestHadamardMatchesMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	forEachKernelSet(t, func(t *testing.T) {
		for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 256, 1024} {
			for _, blocks := range []int{1, 3} {
				n := b * blocks
				x := randVec(r, n)
				signs := randSigns(r, n)
				for _, withSigns := range []bool{false, true} {
					s := signs
					if !withSigns {
						s = nil
					}
					// Forward: transform of (s ⊙ x).
					want := make([]float64, n)
					for i, v := range x {
						want[i] = float64(v)
						if s != nil {
							want[i] *= float64(s[i])
						}
					}
					hadamardRef(want, b)
					got := append([]float32(nil), x...)
					if err := HadamardForward(got, b, s); err != nil {
						t.Fatal(err)
					}
					checkClose(t, "forward", b, got, want)

					// Inverse: s ⊙ (transform of x).
					for i, v := range x {
						want[i] = float64(v)
					}
					hadamardRef(want, b)
					for i := range want {
						if s != nil {
							want[i] *= float64(s[i])
						}
					}
					got = append(got[:0], x...)
					if err := HadamardInverse(got, b, s); err != nil {
						t.Fatal(err)
					}
					checkClose(t, "inverse", b, got, want)
				}
			}
		}
	})
}

func checkClose(t *testing.T, what string, b int, got []float32, want []float64) {
	t.Helper()
	// Each output is a sum of B terms of size ~1/√B·|x|: a few ulp per stage.
	tol := 4e-7 * float64(bits.Len(uint(b))+1) * 4
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol {
			t.Fatalf("%s B=%d: [%d] = %v, want %v", what, b, i, got[i], want[i])
		}
	}
}

func TestHadamardRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	forEachKernelSet(t, func(t *testing.T) {
		for _, b := range []int{8, 128, 1024, MaxHadamardBlock} {
			n := 2 * b
			x := randVec(r, n)
			s := randSigns(r, n)
			y := append([]float32(nil), x...)
			if err := HadamardForward(y, b, s); err != nil {
				t.Fatal(err)
			}
			if err := HadamardInverse(y, b, s); err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if math.Abs(float64(y[i]-x[i])) > 1e-5 {
					t.Fatalf("B=%d: round trip [%d] = %v, want %v", b, i, y[i], x[i])
				}
			}
		}
	})
}

func TestHadamardSignOrderMatters(t *testing.T) {
	// Forward multiplies by the signs before the transform and Inverse
	// after it, so on the same input they must give different results.
	r := rand.New(rand.NewPCG(17, 18))
	x := randVec(r, 64)
	s := randSigns(r, 64)
	a := append([]float32(nil), x...)
	b := append([]float32(nil), x...)
	if err := HadamardForward(a, 64, s); err != nil {
		t.Fatal(err)
	}
	if err := HadamardInverse(b, 64, s); err != nil {
		t.Fatal(err)
	}
	var diff float64
	for i := range a {
		diff = max(diff, math.Abs(float64(a[i]-b[i])))
	}
	if diff < 0.1 {
		t.Fatalf("forward and inverse agree (max diff %v): sign order is not applied", diff)
	}
}

func TestHadamardErrors(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		block int
		signs int
	}{
		{"not power of two", 12, 6, -1},
		{"zero block", 8, 0, -1},
		{"negative block", 8, -8, -1},
		{"too large", 2 * MaxHadamardBlock, 2 * MaxHadamardBlock, -1},
		{"partial block", 24, 16, -1},
		{"short signs", 32, 16, 16},
	}
	for _, tt := range tests {
		x := make([]float32, tt.n)
		for i := range x {
			x[i] = float32(i)
		}
		var s []float32
		if tt.signs >= 0 {
			s = make([]float32, tt.signs)
		}
		for _, f := range []func([]float32, int, []float32) error{HadamardForward, HadamardInverse} {
			if err := f(x, tt.block, s); !errors.Is(err, ErrHadamard) {
				t.Errorf("%s: err = %v, want ErrHadamard", tt.name, err)
			}
			for i := range x {
				if x[i] != float32(i) {
					t.Fatalf("%s: x modified on error", tt.name)
				}
			}
		}
	}
}

func FuzzHadamard(f *testing.F) {
	f.Add(64, 16, true)
	f.Add(10, 3, false)
	f.Fuzz(func(t *testing.T, n, block int, signs bool) {
		if n < 0 || n > 1<<16 {
			return
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%13) - 6
		}
		var s []float32
		if signs {
			s = make([]float32, n)
			for i := range s {
				s[i] = float32(1 - 2*(i%3%2))
			}
		}
		orig := append([]float32(nil), x...)
		if err := HadamardForward(x, block, s); err != nil {
			return
		}
		if err := HadamardInverse(x, block, s); err != nil {
			t.Fatalf("inverse rejected what forward accepted: %v", err)
		}
		for i := range x {
			if math.Abs(float64(x[i]-orig[i])) > 1e-3 {
				t.Fatalf("round trip [%d] = %v, want %v", i, x[i], orig[i])
			}
		}
	})
}
