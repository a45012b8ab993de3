//go:build unix

package qwen35_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"trit/model"
	"trit/quant"
)

// BenchmarkPrefill measures prompt throughput on a synthetic hybrid model
// (hidden 1024, three Gated DeltaNet layers and one gated attention layer,
// Q2_0 weights) at several prompt lengths, fed in batches of 512 tokens as
// an engine would. The recurrent layers cost the same per token at any
// length; only the attention layer grows with the position. Its shape keeps
// the attention's share of the work near that of Qwen3.5-9B (4 query heads
// per KV head; query width a quarter of the hidden size, against 8 of 32
// layers attending in the 9B).
func BenchmarkPrefill(b *testing.B) {
	c := synth{
		arch: "qwen35", hidden: 1024, layers: 4, ffn: 3072, interval: 4,
		heads: 4, kvHeads: 1, hd: 64, ropeDims: 16,
		hk: 4, hv: 8, dk: 64, convK: 4, vocab: 1024, seed: 1, format: quant.Q2_0,
	}
	m, err := model.Load(c.write(b, b.TempDir()), model.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const ubatch = 512
	for _, n := range []int{512, 4096, 16384} {
		ids := tokens(n, c.vocab, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, err := m.NewState(n)
			if err != nil {
				b.Fatal(err)
			}
			logits := make([]float32, c.vocab)
			start, cpu0 := time.Now(), cpuTime()
			for range b.N {
				st.Reset()
				for i := 0; i < n; i += ubatch {
					step := model.Step{State: st, Tokens: ids[i:min(n, i+ubatch)]}
					if i+ubatch >= n {
						step.Logits = logits
					}
					if err := m.Forward([]model.Step{step}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tok/s")
			// CPU time per token is what the flatness claim is about, and
			// unlike wall time it holds on a machine shared with other jobs.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n*b.N), "cpu-µs/tok")
		})
	}
}

// BenchmarkDecode measures token-by-token decoding after a 512-token
// prompt on the same model.
func BenchmarkDecode(b *testing.B) {
	c := synth{
		arch: "qwen35", hidden: 1024, layers: 4, ffn: 3072, interval: 4,
		heads: 4, kvHeads: 1, hd: 64, ropeDims: 16,
		hk: 4, hv: 8, dk: 64, convK: 4, vocab: 1024, seed: 1, format: quant.Q2_0,
	}
	m, err := model.Load(c.write(b, b.TempDir()), model.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	st, _ := m.NewState(512 + b.N)
	if err := m.Forward([]model.Step{{State: st, Tokens: tokens(512, c.vocab, 1)}}); err != nil {
		b.Fatal(err)
	}
	logits := make([]float32, c.vocab)
	b.ResetTimer()
	for i := range b.N {
		if err := m.Forward([]model.Step{{State: st, Tokens: []int{i % c.vocab}, Logits: logits}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// cpuTime returns the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
