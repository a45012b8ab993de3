package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"trit/kernels"
	"trit/model"
)

// ModelDesc is the model part of a report row.
type ModelDesc struct {
	Name   string // file or shape name
	Arch   string
	Size   int64 // bytes of tensor data
	Params int64
	Type   string // weight formats, largest share first
}

// Describe returns the description of a loaded model under name. The type
// lists the formats that hold at least 1% of the weight bytes, largest
// first ("TQ2_0+Q6_K").
func Describe(name string, info *model.Info) ModelDesc {
	type share struct {
		name  string
		bytes int64
	}
	var shares []share
	for n, b := range info.Types {
		if b*100 >= info.WeightBytes {
			shares = append(shares, share{n, b})
		}
	}
	slices.SortFunc(shares, func(a, b share) int {
		return cmp.Or(cmp.Compare(b.bytes, a.bytes), strings.Compare(a.name, b.name))
	})
	names := make([]string, len(shares))
	for i, s := range shares {
		names[i] = s.name
	}
	return ModelDesc{Name: name, Arch: info.Arch, Size: info.WeightBytes, Params: info.Params, Type: strings.Join(names, "+")}
}

// Row is one line of a report: a result with the model and the settings
// it was measured with.
type Row struct {
	Model   ModelDesc
	Threads int
	KVType  string // attention cache element types ("f16", or "q8_0/q4_0" for K/V)
	Result  *Result
	Time    time.Time // when the measurement finished
	// KVTokenBytes is what one position takes in the caches of all layers
	// (model.Info.KVTokenBytes); Bandwidth the machine's read bandwidth in
	// bytes/s, 0 when not measured. Together they give a tg test's ceiling.
	KVTokenBytes int64
	Bandwidth    float64
}

// KVReadPerToken returns the cache bytes a tg test's tokens read on
// average: every position before each of them, at its depth.
func (r Row) KVReadPerToken() int64 {
	t := r.Result.Test
	if t.Gen == 0 {
		return 0
	}
	return r.KVTokenBytes * int64(2*t.Depth+t.Gen+1) / 2
}

// Ceiling returns the tokens/s a tg test could reach if it only streamed
// the weights and the cache it reads once per token at the measured
// bandwidth: bandwidth ÷ (weight bytes + KV bytes read per token); 0 for
// pp tests and without a bandwidth.
func (r Row) Ceiling() float64 {
	if r.Bandwidth <= 0 || r.Result.Test.Gen == 0 {
		return 0
	}
	return r.Bandwidth / float64(r.Model.Size+r.KVReadPerToken())
}

// Record is a row in llama-bench's JSON field names, plus trit's memory
// figures.
type Record struct {
	Model     string    `json:"model_filename"`
	ModelType string    `json:"model_type"`
	ModelSize int64     `json:"model_size"`
	Params    int64     `json:"model_n_params"`
	Arch      string    `json:"arch"`
	Backend   string    `json:"backend"`
	CPUTier   string    `json:"cpu_tier"`
	Threads   int       `json:"n_threads"`
	Batch     int       `json:"n_batch"`
	TypeK     string    `json:"type_k"`
	Prompt    int       `json:"n_prompt"`
	Gen       int       `json:"n_gen"`
	Depth     int       `json:"n_depth"`
	Ctx       int       `json:"n_ctx"`
	Test      string    `json:"test"`
	Time      string    `json:"test_time"`
	AvgNs     int64     `json:"avg_ns"`
	StddevNs  int64     `json:"stddev_ns"`
	AvgTs     float64   `json:"avg_ts"`
	StddevTs  float64   `json:"stddev_ts"`
	SamplesNs []int64   `json:"samples_ns"`
	SamplesTs []float64 `json:"samples_ts"`
	Memory
	KVTokenBytes   int64   `json:"kv_bytes_per_token"`
	KVReadPerToken int64   `json:"kv_bytes_read_per_token"`
	BandwidthGBs   float64 `json:"bandwidth_gbs"`
	CeilingTs      float64 `json:"ceiling_ts"`
	Synthetic      bool    `json:"synthetic_fill"`
}

// Record returns the row's JSON record.
func (r Row) Record() Record {
	res := r.Result
	ns := make([]float64, len(res.Samples))
	samplesNs := make([]int64, len(res.Samples))
	for i, d := range res.Samples {
		ns[i] = float64(d.Nanoseconds())
		samplesNs[i] = d.Nanoseconds()
	}
	avgNs, sdNs := meanSD(ns)
	avgTs, sdTs := res.TokensPerSec()
	return Record{
		Model:     r.Model.Name,
		ModelType: r.Model.Type,
		ModelSize: r.Model.Size,
		Params:    r.Model.Params,
		Arch:      r.Model.Arch,
		Backend:   "CPU",
		CPUTier:   kernels.Tier(),
		Threads:   r.Threads,
		Batch:     res.Batch,
		TypeK:     r.KVType,
		Prompt:    res.Test.Prompt,
		Gen:       res.Test.Gen,
		Depth:     res.Test.Depth,
		Ctx:       res.Ctx,
		Test:      res.Test.Name(),
		Time:      r.Time.UTC().Format(time.RFC3339),
		AvgNs:     int64(avgNs),
		StddevNs:  int64(sdNs),
		AvgTs:     avgTs,
		StddevTs:  sdTs,
		SamplesNs: samplesNs,
		SamplesTs: res.Rates(),
		Memory:    res.Memory,

		KVTokenBytes:   r.KVTokenBytes,
		KVReadPerToken: r.KVReadPerToken(),
		BandwidthGBs:   r.Bandwidth / 1e9,
		CeilingTs:      r.Ceiling(),
		Synthetic:      res.Synthetic,
	}
}

// WriteJSON writes rows as one indented JSON array, like llama-bench -o json.
func WriteJSON(w io.Writer, rows []Row) error { return writeJSON(w, rows, Row.Record) }

// WriteJSONL writes one row as a single line of JSON, like llama-bench -o
// jsonl, so results can be streamed as they finish.
func WriteJSONL(w io.Writer, r Row) error { return writeJSONL(w, r.Record()) }

// writeJSON writes the records of rows as one indented JSON array.
func writeJSON[R, Rec any](w io.Writer, rows []R, record func(R) Rec) error {
	recs := make([]Rec, len(rows))
	for i, r := range rows {
		recs[i] = record(r)
	}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeJSONL writes rec as one line of JSON.
func writeJSONL(w io.Writer, rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Table writes rows as a markdown table in llama-bench's layout. With
// memory set it adds the context, trit's KV and recurrent-state accounting
// and the peak RSS.
type Table struct {
	w       io.Writer
	memory  bool
	started bool
}

// NewTable returns a table writer; rows are written as they are added.
func NewTable(w io.Writer, memory bool) *Table { return &Table{w: w, memory: memory} }

// Add writes one row (and the header before the first).
func (t *Table) Add(r Row) error {
	head := []string{"model", "size", "params", "backend", "threads", "type_k/v", "test", "t/s", "KV B/tok", "ceiling t/s"}
	right := []bool{false, true, true, false, true, false, true, true, true, true}
	if t.memory {
		head = append(head, "ctx", "KV", "recurrent", "scratch", "peak RSS")
		right = append(right, true, true, true, true, true)
	}
	var b strings.Builder
	if !t.started {
		t.started = true
		b.WriteString("|")
		for _, h := range head {
			b.WriteString(" " + h + " |")
		}
		b.WriteString("\n|")
		for _, r := range right {
			if r {
				b.WriteString(" ---: |")
			} else {
				b.WriteString(" --- |")
			}
		}
		b.WriteString("\n")
	}
	mean, sd := r.Result.TokensPerSec()
	test := r.Result.Test.Name()
	if r.Result.Synthetic {
		test += " (synthetic fill)"
	}
	ceiling := "-"
	if c := r.Ceiling(); c > 0 {
		ceiling = fmt.Sprintf("%.2f (%.0f %%)", c, 100*mean/c)
	}
	cells := []string{
		strings.TrimSpace(r.Model.Name + " " + r.Model.Type),
		fmt.Sprintf("%.2f MiB", float64(r.Model.Size)/(1<<20)),
		params(r.Model.Params),
		"CPU (" + kernels.Tier() + ")",
		fmt.Sprint(r.Threads),
		r.KVType,
		test,
		fmt.Sprintf("%.2f ± %.2f", mean, sd),
		fmt.Sprint(r.KVTokenBytes),
		ceiling,
	}
	if t.memory {
		m := r.Result.Memory
		peak := mib(m.PeakRSS)
		if m.PeakRSS == 0 {
			peak = "n/a"
		}
		cells = append(cells, fmt.Sprint(r.Result.Ctx), mib(m.KV), mib(m.Recurrent), mib(m.Scratch), peak)
	}
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
	_, err := io.WriteString(t.w, b.String())
	return err
}

// params prints a parameter count as llama-bench does ("1.72 B"), in
// millions below a billion.
func params(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
