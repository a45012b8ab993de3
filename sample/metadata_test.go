package sample_test

import (
	"testing"

	"trit/gguf"
	"trit/sample"
)

func TestFromMetadata(t *testing.T) {
	m, err := gguf.NewMetadata([]gguf.KV{
		{Key: "general.sampling.temp", Value: gguf.Float32(0.6)},
		{Key: "general.sampling.top_k", Value: gguf.Uint32(40)},
		{Key: "general.sampling.top_p", Value: gguf.Float64(0.5)},
		{Key: "general.sampling.min_p", Value: gguf.Float32(-1)}, // out of range: ignored
		{Key: "general.sampling.penalty_last_n", Value: gguf.Int32(32)},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := sample.DefaultParams()
	got := sample.FromMetadata(&m, d)
	if got.Temperature != 0.6 || got.TopK != 40 || got.TopP != 0.5 || got.MinP != d.MinP || got.RepeatLastN != 32 || got.RepeatPenalty != d.RepeatPenalty {
		t.Errorf("FromMetadata = %+v", got)
	}
}
