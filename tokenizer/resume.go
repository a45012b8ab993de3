package tokenizer

// NewDecoderAfter returns a Decoder for text that continues after token
// prev, such as the last prompt token: a generation's first piece then
// decodes as it would inside the whole sequence (after BOS, a llama
// vocabulary drops the dummy-prefix space).
func (t *Tokenizer) NewDecoderAfter(prev int) *Decoder {
	return &Decoder{t: t, prev: prev}
}
