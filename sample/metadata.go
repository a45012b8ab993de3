package sample

// Metadata is the typed key lookup FromMetadata needs; *gguf.Metadata
// implements it. Each method reports false when the key is absent or of
// another type.
type Metadata interface {
	Float(key string) (float64, bool)
	Uint(key string) (uint64, bool)
	Int(key string) (int64, bool)
}

// FromMetadata returns p with the sampler settings a model declares in its
// general.sampling.* keys (written by converters from the model's
// generation_config.json) put in place of p's.
func FromMetadata(m Metadata, p Params) Params {
	if v, ok := m.Float("general.sampling.temp"); ok && v >= 0 {
		p.Temperature = float32(v)
	}
	if v, ok := m.Uint("general.sampling.top_k"); ok && v < 1<<31 {
		p.TopK = int(v)
	}
	if v, ok := m.Float("general.sampling.top_p"); ok && v >= 0 && v <= 1 {
		p.TopP = float32(v)
	}
	if v, ok := m.Float("general.sampling.min_p"); ok && v >= 0 && v <= 1 {
		p.MinP = float32(v)
	}
	if v, ok := m.Float("general.sampling.penalty_repeat"); ok && v > 0 {
		p.RepeatPenalty = float32(v)
	}
	if v, ok := m.Int("general.sampling.penalty_last_n"); ok && v >= -1 && v < 1<<31 {
		p.RepeatLastN = int(v)
	}
	return p
}
