package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// BenchmarkConcurrentRequests measures aggregate generation throughput of
// 8 concurrent completions (32 tokens each) on the demo model, with one
// slot and with batching over 4 slots.
func BenchmarkConcurrentRequests(b *testing.B) {
	const clients, n = 8, 32
	for _, parallel := range []int{1, 4} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			ts := startServer(b, Config{Backend: &Backend{Engine: demoEngine(b)}, Parallel: parallel})
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for i := range clients {
					wg.Go(func() {
						body := fmt.Sprintf(`{"prompt":"client %d says","max_tokens":%d,"temperature":0}`, i, n)
						resp, err := ts.client.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
						if err != nil || resp.StatusCode != http.StatusOK {
							b.Errorf("request: %v", err)
						}
						if resp != nil {
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*clients*n)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
