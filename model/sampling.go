package model

import (
	"trit/gguf"
	"trit/sample"
)

// Sampling returns p with the sampler settings the file declares in its
// general.sampling.* keys (written by converters from the model's
// generation_config.json) put in place of p's.
func Sampling(f *gguf.File, p sample.Params) sample.Params {
	if v, ok := f.Float("general.sampling.temp"); ok && v >= 0 {
		p.Temperature = float32(v)
	}
	if v, ok := f.Uint("general.sampling.top_k"); ok && v < 1<<31 {
		p.TopK = int(v)
	}
	if v, ok := f.Float("general.sampling.top_p"); ok && v >= 0 && v <= 1 {
		p.TopP = float32(v)
	}
	if v, ok := f.Float("general.sampling.min_p"); ok && v >= 0 && v <= 1 {
		p.MinP = float32(v)
	}
	if v, ok := f.Float("general.sampling.penalty_repeat"); ok && v > 0 {
		p.RepeatPenalty = float32(v)
	}
	if v, ok := f.Int("general.sampling.penalty_last_n"); ok && v >= -1 && v < 1<<31 {
		p.RepeatLastN = int(v)
	}
	return p
}
