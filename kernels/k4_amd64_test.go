//go:build linux

package kernels

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"trit/quant"
)

// guarded returns a copy of data that ends where an inaccessible page
// begins, so a kernel that reads past the last block faults.
func guarded(t *testing.T, data []byte) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	n := (len(data) + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, n+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[n:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	g := mem[n-len(data) : n : n]
	copy(g, data)
	return g
}

// TestQ4Tails runs the Q4_0 and Q4_K kernels of every tier over every
// remainder of their unrolled loops, with the matrix against a guard page.
func TestQ4Tails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := NewPool(1)
	defer p.Close()
	for _, f := range []*quant.Format{quant.Q4_0, quant.Q4_K} {
		for nb := 1; nb <= 9; nb++ {
			cols := nb * f.BlockElems
			m := randMatrix(t, f, 3, cols, rng)
			w := &Matrix{Format: f, Rows: m.Rows, Cols: cols, Data: guarded(t, m.Data)}
			var a Acts
			p.Quantize(&a, randActs(2, cols, rng), 2, cols)
			for _, name := range tiers() {
				restore, err := useTier(name)
				if err != nil {
					t.Fatal(err)
				}
				dst := make([]float32, 2*w.Rows)
				p.MatMulActs(dst, w, &a)
				restore()
				for i := range 2 {
					for r := range w.Rows {
						ref, mag := exactRef(p, w, &a, i, r)
						if got := float64(dst[i*w.Rows+r]); math.Abs(got-ref) > bound(f, cols)*0x1p-23*mag {
							t.Errorf("%s tier %s %d blocks [%d,%d]: got %g want %g", f, name, nb, i, r, got, ref)
						}
					}
				}
			}
		}
	}
}

// TestQ4_0Cancel checks Q4_0 rows whose codes are nearly all 8 (weight
// 0): the exact product is small against the activations, so a kernel
// whose lanes carry a −8·Σq correction that cancels against Σ c·q only
// after rounding fails the bound.
func TestQ4_0Cancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPool(1)
	defer p.Close()
	for _, cols := range []int{64, 128, 160} {
		w := randMatrix(t, quant.Q4_0, 256, cols, rng)
		for b := 0; b < len(w.Data); b += 18 {
			for j := 2; j < 18; j++ {
				w.Data[b+j] = 0x88
			}
			w.Data[b+2+rng.IntN(16)] ^= byte(rng.IntN(16))
		}
		var a Acts
		p.Quantize(&a, randActs(1, cols, rng), 1, cols)
		for _, name := range tiers() {
			restore, err := useTier(name)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, w.Rows)
			p.MatMulActs(dst, w, &a)
			restore()
			for r := range w.Rows {
				ref, mag := exactRef(p, w, &a, 0, r)
				if got := float64(dst[r]); math.Abs(got-ref) > bound(quant.Q4_0, cols)*0x1p-23*mag {
					t.Errorf("tier %s %d cols row %d: got %g want %g", name, cols, r, got, ref)
				}
			}
		}
	}
}
