package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"trit/half"
)

// forEachKernelSet runs f once with every implementation this CPU supports
// made active, so each assembly tier is checked against the references.
func forEachKernelSet(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := active
	defer func() { active = saved }()
	for _, k := range kernelSets {
		active = k
		t.Run(k.name, f)
	}
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// testLengths covers empty, every tail length around the 8- and 16-wide
// vectors, the unrolled 32- and 64-wide loops, and longer rows.
var testLengths = func() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 257, 1000, 4099)
}()

const u32 = 1.0 / (1 << 24) // unit roundoff of float32

func TestImplementation(t *testing.T) {
	if got, want := Implementation(), kernelSets[0].name; got != want {
		t.Errorf("Implementation() = %q, want the best available, %q", got, want)
	}
	if last := kernelSets[len(kernelSets)-1]; last != &genericKernels {
		t.Errorf("the pure-Go kernels are not the last resort: %q", last.name)
	}
	t.Logf("kernel sets on this machine: %d, in use: %s", len(kernelSets), Implementation())
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range testLengths {
			a, b := randVec(r, n), randVec(r, n)
			var want, abs float64
			for i := range a {
				p := float64(a[i]) * float64(b[i])
				want += p
				abs += math.Abs(p)
			}
			got := Dot(a, b)
			// Any float32 summation order is within n·u·Σ|a·b| of the exact sum.
			if bound := float64(n)*u32*abs + 1e-30; math.Abs(float64(got)-want) > bound {
				t.Errorf("n=%d: Dot = %v, want %v (bound %g)", n, got, want, bound)
			}
		}
	})
}

func TestDotExactSmallIntegers(t *testing.T) {
	// Small integers make every association exact, so a kernel that skips
	// or repeats an element cannot hide behind the rounding bound.
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range testLengths {
			a, b := make([]float32, n), make([]float32, n)
			var want float32
			for i := range a {
				a[i], b[i] = float32(i%7-3), float32(i%5+1)
				want += a[i] * b[i]
			}
			if got := Dot(a, b); got != want {
				t.Errorf("n=%d: Dot = %v, want %v", n, got, want)
			}
		}
	})
}

func TestAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range testLengths {
			dst, x := randVec(r, n+1), randVec(r, n)
			sentinel := dst[n]
			want := make([]float32, n)
			for i := range want {
				want[i] = float32(float64(dst[i]) + 0.75*float64(x[i]))
			}
			Axpy(dst[:n], 0.75, x)
			for i := range want {
				// A fused multiply-add rounds once, the Go loop twice.
				tol := 2 * u32 * (math.Abs(float64(want[i])) + math.Abs(0.75*float64(x[i])))
				if math.Abs(float64(dst[i]-want[i])) > tol {
					t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
				}
			}
			if dst[n] != sentinel {
				t.Fatalf("n=%d: wrote past the end", n)
			}
		}
	})
}

func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	forEachKernelSet(t, func(t *testing.T) {
		for _, n := range testLengths {
			a, b := randVec(r, n), randVec(r, n)
			sum, prod, scaled := make([]float32, n+1), make([]float32, n+1), append([]float32(nil), a...)
			sum[n], prod[n] = 42, 42
			Add(sum[:n], a, b)
			Mul(prod[:n], a, b)
			Scale(scaled, -1.5)
			for i := range a {
				if sum[i] != a[i]+b[i] || prod[i] != a[i]*b[i] || scaled[i] != a[i]*-1.5 {
					t.Fatalf("n=%d i=%d: add %v mul %v scale %v for a=%v b=%v", n, i, sum[i], prod[i], scaled[i], a[i], b[i])
				}
			}
			if sum[n] != 42 || prod[n] != 42 {
				t.Fatalf("n=%d: wrote past the end", n)
			}
			// dst may alias an operand.
			Add(a, a, b)
			for i := range a {
				if a[i] != sum[i] {
					t.Fatalf("n=%d: aliased Add differs at %d", n, i)
				}
			}
		}
	})
}

func TestLengthMismatchPanics(t *testing.T) {
	calls := map[string]func(){
		"Dot":       func() { Dot(make([]float32, 3), make([]float32, 4)) },
		"Axpy":      func() { Axpy(make([]float32, 3), 1, make([]float32, 4)) },
		"Add":       func() { Add(make([]float32, 3), make([]float32, 3), make([]float32, 4)) },
		"Mul":       func() { Mul(make([]float32, 4), make([]float32, 3), make([]float32, 4)) },
		"F16ToF32":  func() { F16ToF32(make([]float32, 3), make([]byte, 5)) },
		"F32ToF16":  func() { F32ToF16(make([]byte, 5), make([]float32, 3)) },
		"BF16ToF32": func() { BF16ToF32(make([]float32, 3), make([]byte, 7)) },
		"F32ToBF16": func() { F32ToBF16(make([]byte, 7), make([]float32, 3)) },
		"RMSNorm":   func() { RMSNorm(make([]float32, 3), make([]float32, 3), make([]float32, 2), 1e-6) },
		"L2Norm":    func() { L2Norm(make([]float32, 3), make([]float32, 2), 1e-6) },
		"SwiGLU":    func() { SwiGLU(make([]float32, 3), make([]float32, 3), make([]float32, 2)) },
		"SiLU":      func() { SiLU(make([]float32, 3), make([]float32, 2)) },
		"Sigmoid":   func() { Sigmoid(make([]float32, 3), make([]float32, 2)) },
		"Softplus":  func() { Softplus(make([]float32, 3), make([]float32, 2)) },
		"ApplyTable": func() {
			mustRope(t, RopeConfig{HeadDim: 8, Base: 1e4}).ApplyTable(make([]float32, 15), 2, make([]float32, 8))
		},
		"ApplyShort": func() {
			mustRope(t, RopeConfig{HeadDim: 8, Base: 1e4}).ApplyTable(make([]float32, 16), 2, make([]float32, 7))
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic on mismatched lengths", name)
				}
			}()
			call()
		})
	}
}

func TestF16ToF32AllValues(t *testing.T) {
	src := make([]byte, 2<<16)
	for h := range 1 << 16 {
		src[2*h], src[2*h+1] = byte(h), byte(h>>8)
	}
	forEachKernelSet(t, func(t *testing.T) {
		// Odd lengths and offsets exercise the assembly tail handling.
		for _, n := range []int{1 << 16, 1<<16 - 3} {
			dst := make([]float32, n)
			F16ToF32(dst, src[:2*n])
			for h, got := range dst {
				want := half.ToFloat32(uint16(h))
				if math.IsNaN(float64(want)) {
					// F16C quiets signalling NaNs; a NaN must stay a NaN with its sign.
					if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
						t.Fatalf("h=%#04x: got %v, want NaN", h, got)
					}
					continue
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("h=%#04x: got %v, want %v", h, got, want)
				}
			}
		}
	})
}

func TestF32ToF16(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	src := []float32{0, float32(math.Copysign(0, -1)), 1, -2, 65504, 65520, 1e6, -1e6,
		float32(math.Inf(1)), float32(math.Inf(-1)), 5.96e-8, 2.98e-8, 2.99e-8, 6.1e-5, 1.0009765625,
		math.Float32frombits(0x7fc00001), math.Float32frombits(0x7f800001), math.Float32frombits(0xffa00000)}
	for range 20000 {
		// Random bit patterns cover every exponent, subnormals and NaNs.
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	for range 20000 {
		src = append(src, float32(r.NormFloat64()*1e-4))
	}
	forEachKernelSet(t, func(t *testing.T) {
		dst := make([]byte, 2*len(src))
		F32ToF16(dst, src)
		for i, f := range src {
			got := uint16(dst[2*i]) | uint16(dst[2*i+1])<<8
			if want := half.FromFloat32(f); got != want {
				t.Fatalf("%v (%#08x): got %#04x, want %#04x", f, math.Float32bits(f), got, want)
			}
		}
	})
}

func TestBF16RoundTrip(t *testing.T) {
	forEachKernelSet(t, testBF16RoundTrip)
}

func testBF16RoundTrip(t *testing.T) {
	src := make([]byte, 2<<16)
	for h := range 1 << 16 {
		src[2*h], src[2*h+1] = byte(h), byte(h>>8)
	}
	f := make([]float32, 1<<16-1) // odd, for the tail
	BF16ToF32(f, src[:len(src)-2])
	back := make([]byte, 2*len(f))
	F32ToBF16(back, f)
	for h := range f {
		want := half.BF16ToFloat32(uint16(h))
		if math.Float32bits(f[h]) != math.Float32bits(want) {
			t.Fatalf("BF16ToF32(%#04x) = %v, want %v", h, f[h], want)
		}
		if math.IsNaN(float64(want)) {
			continue // NaN payloads may be quieted on the way back
		}
		if got := uint16(back[2*h]) | uint16(back[2*h+1])<<8; got != uint16(h) {
			t.Fatalf("round trip of %#04x gave %#04x", h, got)
		}
	}
}
