// Package perplexity measures how well a model predicts a text, the way
// llama.cpp's llama-perplexity does, so the figures compare with its: the
// text is tokenized once and cut into non-overlapping chunks of Ctx tokens;
// each chunk is evaluated from an empty state, with its first token replaced
// by BOS when the vocabulary adds one; and only the second half of each
// chunk is scored, so every scored token has at least Ctx/2 tokens of
// context. It also saves the per-token distributions of a base model and
// measures another model's KL divergence from them (llama-perplexity's
// --kl-divergence).
package perplexity

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"trit/logprob"
	"trit/model"
)

// Options control Run.
type Options struct {
	Ctx int // tokens per chunk (llama.cpp's -c)
	// Batch is the most tokens per forward pass (-b; default 512). When it
	// holds two or more chunks, that many chunks go through one pass
	// together, as llama.cpp's n_seq = Batch/Ctx.
	Batch  int
	Chunks int // evaluate at most this many chunks; <= 0: all
	BOS    int // token put at each chunk's first position; < 0: none
	// Save, if set, receives the distribution at every scored position
	// (its header must match the run: see NewHeader).
	Save *Writer
	// TopK is the entries per position of a base file's header made by
	// NewHeader (clamped to 1…vocabulary).
	TopK int
	// Base, if set, is a saved base run to compare against: the tokens
	// are its own, and Result.KL is filled.
	Base *Reader
	// Progress, if set, is called after every chunk.
	Progress func(Progress)
}

// Progress is the running state after a chunk.
type Progress struct {
	Chunk, Chunks int // chunks done, of
	Estimate
	KL        *KL     // running KL figures with a base, else nil
	TokPerSec float64 // tokens evaluated per second so far
	Elapsed   time.Duration
}

// Estimate is a perplexity with its standard error.
type Estimate struct {
	PPL, Err float64
}

// Result is what Run measured.
type Result struct {
	Ctx, Chunks int
	Scored      int // tokens scored
	Evaluated   int // tokens sent through the model
	Estimate
	NLL       float64 // mean negative log-likelihood (nats)
	Elapsed   time.Duration
	TokPerSec float64
	KL        *KL
}

// chunksFor returns the number of chunks Run evaluates for n tokens.
func chunksFor(n int, o *Options) int {
	c := n / o.Ctx
	if o.Chunks > 0 {
		c = min(c, o.Chunks)
	}
	return c
}

// ErrTooShort is returned when the text does not fill one chunk.
// (llama-perplexity asks for two; one is enough to compute the same
// figures.)
var ErrTooShort = errors.New("perplexity: text too short")

// NewHeader returns the header of a base file for a run of o over tokens.
func NewHeader(vocab int, tokens []int, o Options) (Header, error) {
	if err := o.check(len(tokens)); err != nil {
		return Header{}, err
	}
	n := chunksFor(len(tokens), &o)
	return Header{Vocab: vocab, Ctx: o.Ctx, Chunks: n, TopK: min(max(o.TopK, 1), vocab), BOS: max(o.BOS, -1), Tokens: tokens[:n*o.Ctx]}, nil
}

func (o *Options) check(n int) error {
	if o.Ctx < MinCtx {
		return fmt.Errorf("perplexity: context of %d tokens (at least %d)", o.Ctx, MinCtx)
	}
	if n < o.Ctx {
		return fmt.Errorf("%w: %d tokens, fewer than one chunk of %d", ErrTooShort, n, o.Ctx)
	}
	return nil
}

// nll accumulates negative log-likelihoods.
type nll struct {
	sum, sum2 float64
	n         int
}

func (a *nll) add(v float64) { a.sum += v; a.sum2 += v * v; a.n++ }

// estimate is llama-perplexity's: PPL = exp(mean), and its error is PPL
// times the standard error of the mean of the per-token values.
func (a *nll) estimate() Estimate {
	if a.n == 0 {
		return Estimate{}
	}
	mean := a.sum / float64(a.n)
	e := Estimate{PPL: math.Exp(mean)}
	if v := a.sum2/float64(a.n) - mean*mean; v > 0 && a.n > 1 {
		e.Err = math.Sqrt(v/float64(a.n-1)) * e.PPL
	}
	return e
}

// Run evaluates tokens (the whole text, tokenized once) with m.
func Run(m model.Model, tokens []int, o Options) (*Result, error) {
	if o.Base != nil {
		if o.Ctx != 0 && o.Ctx != o.Base.Ctx {
			return nil, fmt.Errorf("perplexity: the base file was computed with a context of %d, not %d", o.Base.Ctx, o.Ctx)
		}
		if o.BOS != o.Base.BOS {
			return nil, fmt.Errorf("perplexity: the base file puts BOS %d at each chunk's start; this model's vocabulary has %d", o.Base.BOS, o.BOS)
		}
		if tokens != nil && !slices.Equal(tokens[:min(len(tokens), len(o.Base.Tokens))], o.Base.Tokens) {
			return nil, fmt.Errorf("perplexity: the text tokenizes differently from the base file's")
		}
		o.Ctx, tokens = o.Base.Ctx, o.Base.Tokens
	} else if err := o.check(len(tokens)); err != nil {
		return nil, err
	}
	vocab := m.Info().Vocab
	if o.Base != nil && o.Base.Vocab != vocab {
		return nil, fmt.Errorf("perplexity: the base file has a vocabulary of %d, the model %d", o.Base.Vocab, vocab)
	}
	for _, t := range tokens {
		if t < 0 || t >= vocab {
			return nil, fmt.Errorf("perplexity: token %d outside the model's vocabulary of %d", t, vocab)
		}
	}
	ctx, first, scored := o.Ctx, o.Ctx/2, Scored(o.Ctx)
	nChunks := chunksFor(len(tokens), &o)
	if o.Save != nil && (o.Save.h.Ctx != ctx || o.Save.h.Chunks != nChunks || o.Save.h.Vocab != vocab) {
		return nil, fmt.Errorf("perplexity: the save file's header does not match the run")
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 512
	}
	nSeq := max(1, batch/ctx)
	seg := min(batch, ctx) // tokens per sequence per forward pass

	states := make([]model.State, min(nSeq, nChunks))
	for i := range states {
		st, err := m.NewState(ctx)
		if err != nil {
			return nil, err
		}
		states[i] = st
	}
	logits := make([][]float32, len(states))
	for i := range logits {
		logits[i] = make([]float32, scored*vocab)
	}
	var recs []Record
	if o.Save != nil {
		recs = make([]Record, scored)
	}
	var kl *klAcc
	if o.Base != nil {
		kl = newKLAcc(nChunks * scored)
	}
	res := &Result{Ctx: ctx, Chunks: nChunks}
	var acc nll
	chunkTok := make([][]int, len(states))
	t0 := time.Now()
	for c0 := 0; c0 < nChunks; c0 += nSeq {
		group := states[:min(nSeq, nChunks-c0)]
		for s, st := range group {
			st.Reset()
			// Only ctx−1 tokens go in: the last is only predicted.
			chunkTok[s] = slices.Clone(tokens[(c0+s)*ctx : (c0+s+1)*ctx-1])
			if o.BOS >= 0 {
				chunkTok[s][0] = o.BOS
			}
		}
		// Passes end at multiples of seg and at first, so the positions
		// before first need no logits.
		for p := 0; p < ctx-1; {
			end := min(p+seg, ctx-1)
			if p < first {
				end = min(end, first)
			}
			steps := make([]model.Step, len(group))
			for s, st := range group {
				steps[s] = model.Step{State: st, Tokens: chunkTok[s][p:end]}
				if p >= first {
					steps[s].Logits, steps[s].All = logits[s][(p-first)*vocab:(end-first)*vocab], true
				}
			}
			if err := m.Forward(steps); err != nil {
				return nil, err
			}
			res.Evaluated += (end - p) * len(group)
			p = end
		}
		for s := range group {
			chunk := tokens[(c0+s)*ctx : (c0+s+1)*ctx]
			var base []Record
			if kl != nil {
				var err error
				if base, err = o.Base.Next(); err != nil {
					if err == io.EOF {
						err = fmt.Errorf("perplexity: the base file ends after %d chunks", o.Base.chunk)
					}
					return nil, err
				}
			}
			for i := range scored {
				row := logits[s][i*vocab : (i+1)*vocab]
				next := chunk[first+i+1]
				lse := logprob.LogSumExp(row)
				lp := logprob.Of(row[next], lse)
				acc.add(-float64(lp))
				if recs != nil {
					recs[i].LogProb = lp
					recs[i].Top = logprob.Top(recs[i].Top, row, o.Save.h.TopK, lse)
				}
				if kl != nil {
					kl.add(row, lse, lp, &base[i])
				}
			}
			if recs != nil {
				if err := o.Save.WriteChunk(recs); err != nil {
					return nil, err
				}
			}
			if o.Progress != nil {
				el := time.Since(t0)
				p := Progress{Chunk: c0 + s + 1, Chunks: nChunks, Estimate: acc.estimate(), Elapsed: el,
					TokPerSec: float64(res.Evaluated) / el.Seconds()}
				if kl != nil {
					p.KL = kl.result(&acc, false)
				}
				o.Progress(p)
			}
		}
	}
	res.Elapsed = time.Since(t0)
	res.TokPerSec = float64(res.Evaluated) / res.Elapsed.Seconds()
	res.Scored = acc.n
	res.NLL = acc.sum / float64(acc.n)
	res.Estimate = acc.estimate()
	if kl != nil {
		res.KL = kl.result(&acc, true)
	}
	return res, nil
}
