package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"trit/kernels"
	"trit/model"
	"trit/quant"
)

// The forward passes of the batched tests: one depth fill, then per
// repetition (after the warm-up) the states brought back to the depth and
// B one-token steps per pass, each with its logits; verify alternates a
// one-token and a k-token step, each with every token's logits.
func TestBatchPasses(t *testing.T) {
	f := &fake{info: model.Info{Vocab: 50}}
	r, err := RunBatch(f, BatchTest{B: 3, Gen: 2, Depth: 5}, Config{Reps: 2, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := "4@0 1@4 1@5L+1@5L+1@5L 1@5L+1@5L+1@5L 1@6L+1@6L+1@6L 1@5L+1@5L+1@5L 1@6L+1@6L+1@6L"
	if got := strings.Join(f.calls, " "); got != want {
		t.Errorf("batch passes:\n got %s\nwant %s", got, want)
	}
	if len(r.Samples) != 2 {
		t.Errorf("%d samples, want 2", len(r.Samples))
	}
	f = &fake{info: model.Info{Vocab: 50}}
	v, err := RunVerify(f, VerifyTest{K: 4, Depth: 2}, Config{Reps: 2, NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	want = "2@0 1@2A 4@2A 1@2A 4@2A"
	if got := strings.Join(f.calls, " "); got != want {
		t.Errorf("verify passes:\n got %s\nwant %s", got, want)
	}
	if len(v.One) != 2 || len(v.Kth) != 2 {
		t.Errorf("%d and %d samples, want 2", len(v.One), len(v.Kth))
	}
}

// Both architectures run the batched tests; the hybrid's recurrent state
// cannot truncate, so its states come back from the snapshot.
func TestRunBatch(t *testing.T) {
	for _, shape := range []string{"tiny", "tiny-qwen35"} {
		m := loadTiny(t, shape, quant.TQ2_0)
		for _, b := range []int{1, 3} {
			r, err := RunBatch(m, BatchTest{B: b, Gen: 3, Depth: 4}, Config{Reps: 2})
			if err != nil {
				t.Fatalf("%s B=%d: %v", shape, b, err)
			}
			agg, _ := r.Aggregate()
			seq, _ := r.PerSeq()
			if len(r.Samples) != 2 || agg <= 0 || agg < seq*float64(b)*0.999 || agg > seq*float64(b)*1.001 {
				t.Errorf("%s B=%d: %d samples, aggregate %g, per-seq %g", shape, b, len(r.Samples), agg, seq)
			}
		}
		v, err := RunVerify(m, VerifyTest{K: 3, Depth: 4}, Config{Reps: 2})
		if err != nil {
			t.Fatalf("%s verify: %v", shape, err)
		}
		if v.Ratio() <= 0 {
			t.Errorf("%s verify: ratio %g", shape, v.Ratio())
		}
	}
}

func TestRunBatchErrors(t *testing.T) {
	f := &fake{info: model.Info{Vocab: 50}}
	for _, bt := range []BatchTest{{B: 0, Gen: 1}, {B: 1, Gen: 0}, {B: 1, Gen: 1, Depth: -1}} {
		if _, err := RunBatch(f, bt, Config{}); !errors.Is(err, ErrTest) {
			t.Errorf("%+v: got %v, want ErrTest", bt, err)
		}
	}
	if _, err := RunBatch(f, BatchTest{B: 2, Gen: 4, Depth: 4}, Config{Ctx: 6}); !errors.Is(err, ErrTest) {
		t.Errorf("context too small: got %v, want ErrTest", err)
	}
	for _, vt := range []VerifyTest{{K: 0}, {K: 2, Depth: -1}} {
		if _, err := RunVerify(f, vt, Config{}); !errors.Is(err, ErrTest) {
			t.Errorf("%+v: got %v, want ErrTest", vt, err)
		}
	}
}

func TestBatchTable(t *testing.T) {
	desc := ModelDesc{Name: "bonsai-1.7b", Type: "TQ2_0"}
	sec := func(s ...float64) []time.Duration {
		d := make([]time.Duration, len(s))
		for i, v := range s {
			d[i] = time.Duration(v * float64(time.Second))
		}
		return d
	}
	var buf bytes.Buffer
	tab := NewBatchTable(&buf)
	rows := []BatchRow{
		{Model: desc, Threads: 2, Batch: &BatchResult{Test: BatchTest{B: 1, Gen: 10}, Samples: sec(1, 1)}},
		{Model: desc, Threads: 2, Verify: &VerifyResult{Test: VerifyTest{K: 4}, One: sec(0.01, 0.02, 0.03), Kth: sec(0.03, 0.01, 0.015)}},
		{Model: desc, Threads: 2, Batch: &BatchResult{Test: BatchTest{B: 4, Gen: 10}, Samples: sec(2, 2)}},
	}
	for _, r := range rows {
		if err := tab.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tab.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `| model | backend | threads | test | B | aggregate t/s | per-seq t/s | × B=1 |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: |
| bonsai-1.7b TQ2_0 | CPU (TIER) | 2 | tg10 B1 | 1 | 10.00 ± 0.00 | 10.00 | 1.00 |
| bonsai-1.7b TQ2_0 | CPU (TIER) | 2 | tg10 B4 | 4 | 20.00 ± 0.00 | 5.00 | 2.00 |

| model | backend | threads | test | k | 1-token step ms | k-token step ms | ratio |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: |
| bonsai-1.7b TQ2_0 | CPU (TIER) | 2 | verify k4 | 4 | 20.00 | 15.00 | 0.75 |
`
	got := strings.ReplaceAll(buf.String(), "CPU ("+kernels.Tier()+")", "CPU (TIER)")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var js bytes.Buffer
	if err := WriteBatchJSONL(&js, rows[1]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"test":"verify k4"`) || !strings.Contains(js.String(), `"ratio":0.75`) {
		t.Errorf("JSONL %s", js.String())
	}
}
