package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// forEachKernelSetB runs a benchmark under every available implementation.
func forEachKernelSetB(b *testing.B, f func(b *testing.B)) {
	saved := active
	defer func() { active = saved }()
	for _, k := range kernelSets {
		active = k
		b.Run(k.name, f)
	}
}

func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{128, 4096} {
		x, y := randVec(r, n), randVec(r, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			forEachKernelSetB(b, func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				var s float32
				for b.Loop() {
					s += Dot(x, y)
				}
				_ = s
			})
		})
	}
}

func BenchmarkAxpy(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{128, 4096} {
		x, y := randVec(r, n), randVec(r, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			forEachKernelSetB(b, func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					Axpy(y, 1e-3, x)
				}
			})
		})
	}
}

func BenchmarkRMSNorm5120(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	x, w := randVec(r, 5120), randVec(r, 5120)
	dst := make([]float32, len(x))
	forEachKernelSetB(b, func(b *testing.B) {
		b.SetBytes(4 * 5120)
		for b.Loop() {
			RMSNorm(dst, x, w, 1e-6)
		}
	})
}

func BenchmarkSoftmax4096(b *testing.B) {
	r := rand.New(rand.NewPCG(6, 6))
	src := randVec(r, 4096)
	x := make([]float32, len(src))
	forEachKernelSetB(b, func(b *testing.B) {
		b.SetBytes(4 * 4096)
		for b.Loop() {
			copy(x, src)
			Softmax(x)
		}
	})
}

func BenchmarkHadamard(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	x := randVec(r, 5120)
	s := randSigns(r, 5120)
	b.Run("B1024x5", func(b *testing.B) {
		forEachKernelSetB(b, func(b *testing.B) {
			b.SetBytes(4 * 5120)
			for b.Loop() {
				if err := HadamardForward(x, 1024, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkRope(b *testing.B) {
	rope := mustRope(b, RopeConfig{HeadDim: 128, Base: 1e6, Neox: true, Scaling: RopeScalingYaRN, Factor: 4, OrigCtx: 16384})
	x := make([]float32, 32*128)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	tab := rope.Table(0, nil)
	b.Run("Table", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			rope.Table(i&4095, tab)
		}
	})
	b.Run("ApplyTable32x128", func(b *testing.B) {
		for b.Loop() {
			rope.ApplyTable(x, 32, tab)
		}
	})
	b.Run("Apply32x128", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			rope.Apply(x, 32, i&4095)
		}
	})
}

func BenchmarkSwiGLU12288(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	g, u := randVec(r, 12288), randVec(r, 12288)
	dst := make([]float32, len(g))
	forEachKernelSetB(b, func(b *testing.B) {
		b.SetBytes(4 * 12288)
		for b.Loop() {
			SwiGLU(dst, g, u)
		}
	})
}

func BenchmarkF16ToF32(b *testing.B) {
	src := make([]byte, 2*4096)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]float32, 4096)
	forEachKernelSetB(b, func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			F16ToF32(dst, src)
		}
	})
}
