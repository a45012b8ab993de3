package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"trit/kernels"
)

// BatchRow is a batched or verify measurement with the model and the
// settings it was measured with; exactly one of Batch and Verify is set.
type BatchRow struct {
	Model   ModelDesc
	Threads int
	Batch   *BatchResult
	Verify  *VerifyResult
	Time    time.Time
}

// BatchRecord is a BatchRow in JSON, with llama-bench's field names where
// they exist.
type BatchRecord struct {
	Model     string  `json:"model_filename"`
	ModelType string  `json:"model_type"`
	CPUTier   string  `json:"cpu_tier"`
	Threads   int     `json:"n_threads"`
	Test      string  `json:"test"`
	Time      string  `json:"test_time"`
	Depth     int     `json:"n_depth"`
	B         int     `json:"n_seq,omitempty"`
	Gen       int     `json:"n_gen,omitempty"`
	AvgTs     float64 `json:"avg_ts,omitempty"`     // aggregate
	StddevTs  float64 `json:"stddev_ts,omitempty"`  // aggregate
	SeqTs     float64 `json:"avg_seq_ts,omitempty"` // per sequence
	K         int     `json:"n_verify,omitempty"`
	OneNs     []int64 `json:"one_token_step_ns,omitempty"`
	KNs       []int64 `json:"k_token_step_ns,omitempty"`
	Ratio     float64 `json:"ratio,omitempty"` // median k-token step / median one-token step
	SamplesNs []int64 `json:"samples_ns,omitempty"`
}

func nanos(ds []time.Duration) []int64 {
	ns := make([]int64, len(ds))
	for i, d := range ds {
		ns[i] = d.Nanoseconds()
	}
	return ns
}

// Record returns the row's JSON record.
func (r BatchRow) Record() BatchRecord {
	rec := BatchRecord{
		Model: r.Model.Name, ModelType: r.Model.Type, CPUTier: kernels.Tier(), Threads: r.Threads,
		Time: r.Time.UTC().Format(time.RFC3339),
	}
	if b := r.Batch; b != nil {
		rec.Test, rec.Depth, rec.B, rec.Gen = b.Test.Name(), b.Test.Depth, b.Test.B, b.Test.Gen
		rec.AvgTs, rec.StddevTs = b.Aggregate()
		rec.SeqTs, _ = b.PerSeq()
		rec.SamplesNs = nanos(b.Samples)
	}
	if v := r.Verify; v != nil {
		rec.Test, rec.Depth, rec.K = v.Test.Name(), v.Test.Depth, v.Test.K
		rec.OneNs, rec.KNs, rec.Ratio = nanos(v.One), nanos(v.Kth), v.Ratio()
	}
	return rec
}

// WriteBatchJSON writes rows as one indented JSON array.
func WriteBatchJSON(w io.Writer, rows []BatchRow) error {
	return writeJSON(w, rows, BatchRow.Record)
}

// WriteBatchJSONL writes one row as a line of JSON.
func WriteBatchJSONL(w io.Writer, r BatchRow) error { return writeJSONL(w, r.Record()) }

// BatchTable writes batched and verify rows as two markdown tables: the
// batched rows as they are added, the verify rows at Flush. A batched
// row's "× B=1" compares its aggregate rate with the last B = 1 row of the
// same model, threads, depth and length.
type BatchTable struct {
	w      io.Writer
	batch  bool               // the batched header was written
	verify strings.Builder    // the verify table so far
	single map[string]float64 // B = 1 aggregate rates by model, threads, depth, length
}

// NewBatchTable returns a table writer; rows are written as they are added.
func NewBatchTable(w io.Writer) *BatchTable {
	return &BatchTable{w: w, single: map[string]float64{}}
}

// Add writes one row, and a table header before the first of its kind.
func (t *BatchTable) Add(r BatchRow) error {
	var b strings.Builder
	name := strings.TrimSpace(r.Model.Name + " " + r.Model.Type)
	backend := "CPU (" + kernels.Tier() + ")"
	switch {
	case r.Batch != nil:
		if !t.batch {
			t.batch = true
			b.WriteString(header("model", "backend", "threads", "test", "B", "aggregate t/s", "per-seq t/s", "× B=1"))
		}
		res := r.Batch
		key := fmt.Sprint(name, r.Threads, res.Test.Depth, res.Test.Gen)
		agg, sd := res.Aggregate()
		seq, _ := res.PerSeq()
		if res.Test.B == 1 {
			t.single[key] = agg
		}
		rel := "–"
		if one := t.single[key]; one > 0 {
			rel = fmt.Sprintf("%.2f", agg/one)
		}
		b.WriteString(row(name, backend, fmt.Sprint(r.Threads), res.Test.Name(), fmt.Sprint(res.Test.B),
			fmt.Sprintf("%.2f ± %.2f", agg, sd), fmt.Sprintf("%.2f", seq), rel))
	case r.Verify != nil:
		if t.verify.Len() == 0 {
			t.verify.WriteString(header("model", "backend", "threads", "test", "k", "1-token step ms", "k-token step ms", "ratio"))
		}
		v := r.Verify
		ms := func(d []time.Duration) string { return fmt.Sprintf("%.2f", float64(median(d).Microseconds())/1e3) }
		t.verify.WriteString(row(name, backend, fmt.Sprint(r.Threads), v.Test.Name(), fmt.Sprint(v.Test.K),
			ms(v.One), ms(v.Kth), fmt.Sprintf("%.2f", v.Ratio())))
		return nil
	default:
		return fmt.Errorf("bench: empty batch row")
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// Flush writes the verify table, after a blank line if the batched one
// precedes it.
func (t *BatchTable) Flush() error {
	if t.verify.Len() == 0 {
		return nil
	}
	s := t.verify.String()
	if t.batch {
		s = "\n" + s
	}
	t.verify.Reset()
	_, err := io.WriteString(t.w, s)
	return err
}

// header returns a markdown header of the columns (left-aligned first
// four, right-aligned the rest).
func header(cols ...string) string {
	var b strings.Builder
	b.WriteString(row(cols...))
	b.WriteString("|")
	for i := range cols {
		if i < 4 {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	return b.String()
}

func row(cells ...string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
	return b.String()
}
