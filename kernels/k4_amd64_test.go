//go:build linux && !purego

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
						ref, mag := exactRef(p, w, &a, i, r, true)
						if got := float64(dst[i*w.Rows+r]); math.Abs(got-ref) > bound(f, cols)*0x1p-23*mag {
							t.Errorf("%s tier %s %d blocks [%d,%d]: got %g want %g", f, name, nb, i, r, got, ref)
						}
					}
				}
			}
		}
	}
}
