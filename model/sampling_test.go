package model

import (
	"bytes"
	"testing"

	"trit/gguf"
	"trit/sample"
)

func TestSampling(t *testing.T) {
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v gguf.Value
	}{
		{"general.sampling.temp", gguf.Float32(0.6)},
		{"general.sampling.top_k", gguf.Uint32(40)},
		{"general.sampling.top_p", gguf.Float64(0.5)},
		{"general.sampling.min_p", gguf.Float32(-1)}, // out of range: ignored
		{"general.sampling.penalty_last_n", gguf.Int32(32)},
	} {
		if err := w.AddKV(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	d := sample.DefaultParams()
	got := Sampling(f, d)
	if got.Temperature != 0.6 || got.TopK != 40 || got.TopP != 0.5 || got.MinP != d.MinP || got.RepeatLastN != 32 || got.RepeatPenalty != d.RepeatPenalty {
		t.Errorf("Sampling = %+v", got)
	}
}
