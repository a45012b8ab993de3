// Package engine runs generation: it feeds a prompt through a model in
// batches, samples tokens one at a time, streams the text, and stops at an
// end-of-generation token, a stop string, a token limit or cancellation.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"trit/model"
	"trit/sample"
	"trit/tokenizer"
)

// Engine couples a model with its tokenizer.
type Engine struct {
	Model model.Model
	Tok   *tokenizer.Tokenizer
	// EOG are the tokens that end a generation.
	EOG []int
	// Batch is the most prompt tokens sent through the model at once
	// (default 512): it bounds the activation memory of prefill.
	Batch int
	// Sampling are the default sampler settings: the model's own, where
	// the file declares them (model.Sampling), else sample.DefaultParams.
	Sampling sample.Params
}

// Params control one generation.
type Params struct {
	MaxTokens int // tokens to generate; <= 0 means until the context is full
	Sample    sample.Params
	Stop      []string // stop strings: generation ends before them
	// IgnoreEOG keeps generating past end-of-generation tokens.
	IgnoreEOG bool
}

// Result reports what a generation did.
type Result struct {
	Tokens       []int  // generated tokens
	Text         string // generated text, without a matched stop string
	FinishReason string // "stop" (EOG token or stop string), "length" or "cancelled"
	PromptTokens int
	PromptTime   time.Duration
	GenTime      time.Duration
}

// Defaults returns the engine's default sampler settings: Sampling, or
// sample.DefaultParams when Sampling is unset.
func (e *Engine) Defaults() sample.Params {
	if e.Sampling == (sample.Params{}) {
		return sample.DefaultParams()
	}
	return e.Sampling
}

// PromptTPS is the prefill speed in tokens per second.
func (r *Result) PromptTPS() float64 { return rate(r.PromptTokens, r.PromptTime) }

// GenTPS is the generation speed in tokens per second.
func (r *Result) GenTPS() float64 {
	// The first generated token comes out of prefill: count the others.
	n := len(r.Tokens) - 1
	if n < 1 {
		return 0
	}
	return rate(n, r.GenTime)
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrContextFull is returned when the prompt does not fit in the state.
var ErrContextFull = errors.New("engine: prompt does not fit in the context")

// Prefill feeds tokens through the model into st in batches and returns
// the logits after the last one.
func (e *Engine) Prefill(st model.State, tokens []int, logits []float32) error {
	return e.PrefillInput(st, model.Input{Tokens: tokens}, logits)
}

// PrefillInput is Prefill for a prompt that may hold embedding rows
// (images) and explicit positions.
func (e *Engine) PrefillInput(st model.State, in model.Input, logits []float32) error {
	tokens := in.Tokens
	if len(tokens) == 0 {
		return fmt.Errorf("engine: empty prompt")
	}
	if st.Pos()+len(tokens) > st.Cap() {
		return fmt.Errorf("%w: %d prompt tokens after %d cached, context %d", ErrContextFull, len(tokens), st.Pos(), st.Cap())
	}
	b := e.Batch
	if b <= 0 {
		b = 512
	}
	for i := 0; i < len(tokens); i += b {
		j := min(i+b, len(tokens))
		step := in.Step(st, i, j)
		if j == len(tokens) {
			step.Logits = logits
		}
		if err := e.Model.Forward([]model.Step{step}); err != nil {
			return err
		}
	}
	return nil
}

// Generate continues the sequence in st with prompt and samples up to
// p.MaxTokens tokens, calling emit with each piece of text as soon as it is
// complete UTF-8 and cannot be the start of a stop string. emit may return
// an error to stop early; ctx cancellation stops between tokens.
func (e *Engine) Generate(ctx context.Context, st model.State, prompt []int, p Params, emit func(string) error) (*Result, error) {
	return e.GenerateInput(ctx, st, model.Input{Tokens: prompt}, p, emit)
}

// GenerateInput is Generate for a prompt that may hold embedding rows
// (images) and explicit positions.
func (e *Engine) GenerateInput(ctx context.Context, st model.State, in model.Input, p Params, emit func(string) error) (*Result, error) {
	prompt := in.Tokens
	res := &Result{PromptTokens: len(prompt)}
	vocab := e.Model.Info().Vocab
	logits := make([]float32, vocab)
	smp := sample.New(p.Sample)
	last := -1
	for _, t := range prompt {
		if t != model.EmbedToken {
			smp.Accept(t)
			last = t
		}
	}
	dec := e.Tok.NewDecoder()
	if last >= 0 {
		dec = e.Tok.NewDecoderAfter(last)
	}
	t0 := time.Now()
	if err := e.PrefillInput(st, in, logits); err != nil {
		return res, err
	}
	res.PromptTime = time.Since(t0)
	t1 := time.Now()
	stop := sample.NewStopMatcher(p.Stop...)
	var text []byte
	out := func(s string) error {
		if s == "" {
			return nil
		}
		text = append(text, s...)
		if emit != nil {
			return emit(s)
		}
		return nil
	}
	// finish releases the text held back for an incomplete character or a
	// possible stop string.
	finish := func() error {
		rest, stopped := stop.Write(dec.Flush())
		if err := out(rest); err != nil || stopped {
			return err
		}
		return out(stop.Flush())
	}
	defer func() {
		res.GenTime = time.Since(t1)
		res.Text = string(text)
	}()
	for {
		if err := ctx.Err(); err != nil {
			res.FinishReason = "cancelled"
			return res, nil
		}
		id := smp.Sample(logits)
		smp.Accept(id)
		if !p.IgnoreEOG && slices.Contains(e.EOG, id) {
			res.FinishReason = "stop"
			return res, finish()
		}
		res.Tokens = append(res.Tokens, id)
		emitNow, matched := stop.Write(dec.Add(id))
		if err := out(emitNow); err != nil {
			return res, err
		}
		if matched {
			res.FinishReason = "stop"
			return res, nil
		}
		if (p.MaxTokens > 0 && len(res.Tokens) >= p.MaxTokens) || st.Pos() >= st.Cap() {
			res.FinishReason = "length"
			return res, finish()
		}
		if err := e.Model.Forward([]model.Step{{State: st, Tokens: []int{id}, Logits: logits}}); err != nil {
			return res, err
		}
	}
}
