package quant

import (
	"math/rand/v2"
	"testing"
)

// benchData returns n gaussian values and their encoding in f.
func benchData(b *testing.B, f *Format, n int) ([]float32, []byte) {
	r := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	data := make([]byte, n/f.BlockElems*f.BlockBytes)
	if err := f.Encode(data, x); err != nil {
		b.Fatal(err)
	}
	return x, data
}

// The throughput figures are in decoded float32 bytes per second.
func BenchmarkDecode(b *testing.B) {
	const n = 1 << 16
	for _, f := range All {
		b.Run(f.Name, func(b *testing.B) {
			x, data := benchData(b, f, n)
			b.SetBytes(4 * n)
			for b.Loop() {
				f.decode(x, data)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	const n = 1 << 16
	for _, f := range All {
		b.Run(f.Name, func(b *testing.B) {
			x, data := benchData(b, f, n)
			b.SetBytes(4 * n)
			for b.Loop() {
				f.encode(data, x)
			}
		})
	}
}

// Throughput in source bytes per second.
func BenchmarkTranscode(b *testing.B) {
	const n, rowLen = 1 << 16, 1024
	r := rand.New(rand.NewPCG(11, 12))
	codes, scales := randRows(r, n, false, false)
	for _, p := range [][2]*Format{{PQ2_0, PTQ1_0}, {PTQ1_0, PQ2_0}, {Q2_0, TQ2_0}, {Q2_0, Q2_0g64}, {TQ1_0, Q2_0}} {
		src, dst := p[0], p[1]
		b.Run(src.Name+"_to_"+dst.Name, func(b *testing.B) {
			data := pack(src, codes, scales)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Transcode(dst, src, data, rowLen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
