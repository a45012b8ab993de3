package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"trit/half"
	"trit/quant"
)

// The ternary formats, the subject of the throughput targets.
var benchFormats = []*quant.Format{quant.Q2_0, quant.PQ2_0, quant.Q2_0g64, quant.TQ2_0, quant.Q1_0, quant.PTQ1_0, quant.TQ1_0}

type benchShape struct {
	name       string
	cols, rows int
}

// matvecShapes are real decode shapes (cols → rows): Bonsai 8B gate/up,
// down and the LM head, and Bonsai 27B gate/up.
var matvecShapes = []benchShape{
	{"8B-4096x12288", 4096, 12288},
	{"8B-12288x4096", 12288, 4096},
	{"8B-4096x151936", 4096, 151936},
	{"27B-5120x17408", 5120, 17408},
}

// matmulShapes are prefill shapes: Bonsai 1.7B gate/up and down (the model
// of the llama.cpp prefill figures in docs/peers.md) and Bonsai 8B gate/up.
var matmulShapes = []benchShape{
	{"1.7B-2048x6144", 2048, 6144},
	{"1.7B-6144x2048", 6144, 2048},
	{"8B-4096x12288", 4096, 12288},
}

// benchMatrix returns a matrix of valid random blocks: ternary codes
// (no Q2_0 code 3) and small fp16 scales. A 1 MiB random pattern is tiled
// over the matrix, which keeps generation fast; every byte is still read
// from memory.
func benchMatrix(f *quant.Format, rows, cols int) *Matrix {
	rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
	pat := make([]byte, (1<<20)/f.BlockBytes*f.BlockBytes)
	for i := range pat {
		switch f {
		case quant.Q2_0, quant.PQ2_0, quant.Q2_0g64, quant.TQ2_0:
			var b byte
			for range 4 {
				b = b<<2 | byte(rng.IntN(3))
			}
			pat[i] = b
		default:
			pat[i] = byte(rng.Uint32())
		}
	}
	for b := 0; b < len(pat); b += f.BlockBytes {
		for _, off := range scaleOffsets[f] {
			binary.LittleEndian.PutUint16(pat[b+off:], half.FromFloat32(rng.Float32()*0.1))
		}
	}
	data := make([]byte, rows*cols/f.BlockElems*f.BlockBytes)
	for i := 0; i < len(data); i += len(pat) {
		copy(data[i:], pat)
	}
	return &Matrix{Format: f, Rows: rows, Cols: cols, Data: data}
}

// benchTiers runs fn once per tier this machine has and per thread count.
func benchTiers(b *testing.B, fn func(b *testing.B, p *Pool)) {
	for _, name := range tiers() {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", name, threads), func(b *testing.B) {
				restore, err := useTier(name)
				if err != nil {
					b.Fatal(err)
				}
				defer restore()
				p := NewPool(threads)
				defer p.Close()
				fn(b, p)
			})
		}
	}
}

// headFormats are the formats token embeddings and the LM head come in:
// llama-quantize's Q8_0 and Q6_K, the Q4_0 and Q4_K of its smaller mixes,
// and the unquantized F16, BF16 and F32; headShape is the Bonsai 1.7B
// head, the largest matrix read per token.
var (
	headFormats = []*quant.Format{quant.Q8_0, quant.Q6_K, quant.Q4_0, quant.Q4_K, quant.F16, quant.BF16, quant.F32}
	headShape   = benchShape{"1.7B-2048x151936", 2048, 151936}
)

// BenchmarkMatVec reports weight bytes streamed per second for decode
// (n = 1) at real shapes: the ternary formats at matvecShapes and the
// head formats at headShape.
func BenchmarkMatVec(b *testing.B) {
	for _, sh := range matvecShapes {
		for _, f := range benchFormats {
			benchMatVec(b, f, sh)
		}
	}
	for _, f := range headFormats {
		benchMatVec(b, f, headShape)
	}
}

// matvecBytes is the least weight bytes one matrix-vector benchmark cycles
// through: 8× this machine's 32 MiB L3, so the weights stream from memory
// as a model's do (a single 8B gate matrix, 13–27 MB, stays in L3 between
// products and measures above the memory bandwidth).
const matvecBytes = 256 << 20

// benchMatVec is BenchmarkMatVec for one format and shape. It cycles through
// copies of the matrix that together hold at least matvecBytes.
func benchMatVec(b *testing.B, f *quant.Format, sh benchShape) {
	var ws []*Matrix
	b.Run(f.Name+"/"+sh.name, func(b *testing.B) {
		benchTiers(b, func(b *testing.B, p *Pool) {
			if ws == nil {
				ws = streamed(f, sh)
			}
			x := randActs(1, sh.cols, rand.New(rand.NewPCG(1, 1)))
			dst := make([]float32, sh.rows)
			var a Acts
			p.Quantize(&a, x, 1, sh.cols)
			p.MatMulActs(dst, ws[0], &a)
			b.SetBytes(int64(len(ws[0].Data)))
			b.ResetTimer()
			i := 0
			for b.Loop() {
				p.MatMul(dst, ws[i], x, 1)
				i = (i + 1) % len(ws)
			}
		})
	})
}

// BenchmarkMatMul reports GOP/s (2·rows·cols·N per product) for prefill
// batches of N = 64 and 512 rows, and, where a tier has a GEMM, by the
// few-row path that a batch-invariant pool takes instead (N512-invariant).
// The generic tier runs only N = 64: at N = 512 one product takes tens of
// seconds there.
func BenchmarkMatMul(b *testing.B) {
	for _, sh := range matmulShapes {
		for _, f := range benchFormats {
			var w *Matrix
			for _, n := range []int{64, 512} {
				for _, path := range []string{"", "-invariant"} {
					b.Run(fmt.Sprintf("%s/%s/N%d%s", f.Name, sh.name, n, path), func(b *testing.B) {
						benchTiers(b, func(b *testing.B, p *Pool) {
							if n > 64 && tier == tierGeneric {
								b.Skip("generic tier: N = 64 only")
							}
							if path != "" && traitsFor(f, tier).gemm == nil {
								b.Skip("no GEMM at this tier: always batch-invariant")
							}
							p.SetBatchInvariant(path != "")
							if w == nil {
								w = benchMatrix(f, sh.rows, sh.cols)
							}
							x := randActs(n, sh.cols, rand.New(rand.NewPCG(1, 1)))
							dst := make([]float32, n*sh.rows)
							b.ResetTimer()
							for b.Loop() {
								p.MatMul(dst, w, x, n)
							}
							ops := 2 * float64(sh.rows) * float64(sh.cols) * float64(n) * float64(b.N)
							b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOP/s")
						})
					})
				}
			}
			w = nil
		}
	}
}

// BenchmarkFewRows reports the time per activation row (µs/row) of
// products of N = 1 to 16 rows at decode shapes, weights streamed from
// memory, by the few-row path (MatMul) and, where the tier has one, by the
// GEMM (path=gemm): which wins per format decides fewRows. The shape
// L2-2048x512 (270 KiB of TQ2_0) is one matrix that stays in L2: the
// compute cost per row, without the memory.
func BenchmarkFewRows(b *testing.B) {
	shapes := []benchShape{{"1.7B-2048x6144", 2048, 6144}, {"8B-4096x12288", 4096, 12288}, {"L2-2048x512", 2048, 512}}
	for _, sh := range shapes {
		for _, f := range append(benchFormats, headFormats...) {
			var ws []*Matrix
			for _, n := range []int{1, 2, 4, 8, 16} {
				for _, path := range []string{"rows", "gemm"} {
					b.Run(fmt.Sprintf("%s/%s/N%d/%s", f.Name, sh.name, n, path), func(b *testing.B) {
						benchTiers(b, func(b *testing.B, p *Pool) {
							tr := traitsFor(f, tier)
							if path == "gemm" && tr.gemm == nil {
								b.Skip("no GEMM at this tier")
							}
							if ws == nil {
								if strings.HasPrefix(sh.name, "L2") {
									ws = []*Matrix{benchMatrix(f, sh.rows, sh.cols)}
								} else {
									ws = streamed(f, sh)
								}
							}
							x := randActs(n, sh.cols, rand.New(rand.NewPCG(1, 1)))
							dst := make([]float32, n*sh.rows)
							var a Acts
							i := 0
							for b.Loop() {
								if path == "gemm" {
									p.Quantize(&a, x, n, sh.cols)
									p.matMulGEMM(dst, ws[i], &a, tr.gemm)
								} else {
									p.MatMul(dst, ws[i], x, n)
								}
								i = (i + 1) % len(ws)
							}
							b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*n), "µs/row")
						})
					})
				}
			}
		}
	}
}

// streamed returns copies of a benchMatrix that together hold at least
// matvecBytes, so that cycling through them streams the weights from memory.
func streamed(f *quant.Format, sh benchShape) []*Matrix {
	w := benchMatrix(f, sh.rows, sh.cols)
	ws := []*Matrix{w}
	for len(ws)*len(w.Data) < matvecBytes {
		ws = append(ws, &Matrix{Format: f, Rows: w.Rows, Cols: w.Cols, Data: append([]byte(nil), w.Data...)})
	}
	return ws
}

// bandwidthBuf is the 2 GiB buffer of BenchmarkBandwidth, allocated once.
var bandwidthBuf = sync.OnceValue(func() []uint64 {
	buf := make([]uint64, (2<<30)/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	return buf
})

// readSum reads s sequentially; eight independent chains keep the loads,
// not the adds, the limit.
func readSum(s []uint64) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	for i := 0; i+8 <= len(s); i += 8 {
		v := s[i : i+8 : i+8]
		a0 += v[0]
		a1 += v[1]
		a2 += v[2]
		a3 += v[3]
		a4 += v[4]
		a5 += v[5]
		a6 += v[6]
		a7 += v[7]
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

var bandwidthSink uint64

// BenchmarkBandwidth measures the machine's sequential read bandwidth over
// 2 GiB with 1 and 2 threads, the ceiling for the matvec figures.
func BenchmarkBandwidth(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) {
			buf := bandwidthBuf()
			p := NewPool(threads)
			defer p.Close()
			sums := make([]uint64, threads)
			b.SetBytes(int64(len(buf) * 8))
			b.ResetTimer()
			for b.Loop() {
				p.For(threads, func(lo, hi int) {
					for t := lo; t < hi; t++ {
						sums[t] = readSum(buf[t*len(buf)/threads : (t+1)*len(buf)/threads])
					}
				})
			}
			bandwidthSink = sums[0]
		})
	}
}
