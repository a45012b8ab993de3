package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"trit/perplexity"
	"trit/tokenizer"
)

func init() {
	register(&command{
		name:  "perplexity",
		usage: "-m MODEL -f TEXT [-c 512] [-b 512] [--chunks N] [--save-logits FILE [--save-top K]] [--kl-base FILE] [--json]",
		short: "measure perplexity (as llama-perplexity) and KL divergence against a base model",
		run:   runPerplexity,
	})
}

func runPerplexity(args []string, stdout, stderr io.Writer) error {
	c := commands["perplexity"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	mf.register(fs)
	// -c is the chunk size here, with llama-perplexity's default.
	mf.ctx = 512
	for _, n := range []string{"c", "ctx-size"} {
		f := fs.Lookup(n)
		f.DefValue, f.Usage = "512", "tokens per chunk (llama-perplexity's -c)"
	}
	var textPath, savePath, basePath string
	var chunks, saveTop int
	var asJSON bool
	fs.StringVar(&textPath, "f", "", "text `file` to evaluate (with --kl-base: optional, checked against the base's tokens)")
	fs.StringVar(&textPath, "file", "", "same as -f")
	fs.IntVar(&chunks, "chunks", -1, "evaluate at most this many chunks (-1: all)")
	fs.StringVar(&savePath, "save-logits", "", "write the distribution at every scored token to `FILE` (a base for --kl-base)")
	fs.IntVar(&saveTop, "save-top", 128, "with --save-logits: most likely tokens kept per position (0: the whole vocabulary, exact KL)")
	fs.StringVar(&basePath, "kl-base", "", "compare with the base distributions in `FILE` (from --save-logits): KL divergence, top-1 agreement, Δ perplexity")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON on stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if textPath == "" && basePath == "" {
		fmt.Fprintln(stderr, "trit perplexity: -f TEXT is required (or --kl-base FILE)")
		return errUsage
	}
	if savePath != "" && basePath != "" {
		fmt.Fprintln(stderr, "trit perplexity: --save-logits and --kl-base exclude each other")
		return errUsage
	}
	ctxSet := false
	fs.Visit(func(f *flag.Flag) { ctxSet = ctxSet || f.Name == "c" || f.Name == "ctx-size" })

	l, err := mf.load(stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	opts := perplexity.Options{Ctx: mf.ctx, Batch: mf.batch, Chunks: chunks, BOS: -1}
	if l.eng.Tok.AddsBOS() {
		opts.BOS = l.eng.Tok.BOS()
	}
	var tokens []int
	if textPath != "" {
		if tokens, err = tokenizeFile(l.eng.Tok, textPath, stderr); err != nil {
			return err
		}
	}
	if basePath != "" {
		base, err := perplexity.Open(basePath)
		if err != nil {
			return err
		}
		defer base.Close()
		if !ctxSet {
			opts.Ctx = 0 // the base's
		}
		opts.Base = base
	}
	if savePath != "" {
		vocab := l.eng.Model.Info().Vocab
		opts.TopK = saveTop
		if saveTop <= 0 {
			opts.TopK = vocab
		}
		h, err := perplexity.NewHeader(vocab, tokens, opts)
		if err != nil {
			return err
		}
		w, err := perplexity.Create(savePath, h)
		if err != nil {
			return err
		}
		defer w.Abort()
		opts.Save = w
	}
	var running []perplexity.Estimate
	t0 := time.Now()
	opts.Progress = func(p perplexity.Progress) {
		running = append(running, p.Estimate)
		if asJSON {
			fmt.Fprintf(stderr, "\r%s", progressLine(p))
			return
		}
		line := fmt.Sprintf("[%d/%d] PPL = %.4f ± %.4f", p.Chunk, p.Chunks, p.PPL, p.Err)
		if p.KL != nil {
			line += fmt.Sprintf("  KL = %.6f ± %.6f  same top = %.2f %%", p.KL.Mean, p.KL.MeanErr, 100*p.KL.SameTop)
		}
		fmt.Fprintln(stdout, line)
		fmt.Fprintf(stderr, "\r%s", progressLine(p))
	}
	res, err := perplexity.Run(l.eng.Model, tokens, opts)
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	if opts.Save != nil {
		if err := opts.Save.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "trit: wrote %s (%d chunks, top %d per position)\n", savePath, res.Chunks, opts.TopK)
	}
	fmt.Fprintf(stderr, "trit: %d chunks of %d tokens, %d tokens scored, %d evaluated in %v (%.1f tok/s)\n",
		res.Chunks, res.Ctx, res.Scored, res.Evaluated, time.Since(t0).Round(time.Millisecond), res.TokPerSec)
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			*perplexity.Result
			Running []perplexity.Estimate
		}{res, running})
	}
	fmt.Fprintf(stdout, "Final estimate: PPL = %.4f +/- %.5f\n", res.PPL, res.Err)
	if k := res.KL; k != nil {
		fmt.Fprintf(stdout, "PPL(base)      = %.4f +/- %.5f\n", k.Base.PPL, k.Base.Err)
		fmt.Fprintf(stdout, "PPL - PPL(base) = %.6f +/- %.6f   ln(PPL/PPL(base)) = %.6f +/- %.6f\n", k.Diff, k.DiffErr, k.LogRatio, k.LogRatioErr)
		fmt.Fprintf(stdout, "KL divergence: mean %.6f +/- %.6f, median %.6f, p99 %.6f, p99.9 %.6f, max %.6f (%d positions)\n",
			k.Mean, k.MeanErr, k.Median, k.P99, k.P999, k.Max, k.Positions)
		fmt.Fprintf(stdout, "Same top token: %.3f +/- %.3f %%   RMS Δp: %.3f %%\n", 100*k.SameTop, 100*k.SameTopErr, 100*k.RMSDeltaP)
	}
	return nil
}

// tokenizeFile reads and tokenizes a text as llama-perplexity does: one
// trailing newline dropped, BOS prepended where the vocabulary adds one,
// special-token text left as text.
func tokenizeFile(tok *tokenizer.Tokenizer, path string, stderr io.Writer) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := strings.TrimSuffix(string(b), "\n")
	t0 := time.Now()
	ids := tok.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
	fmt.Fprintf(stderr, "trit: %s: %d bytes, %d tokens (tokenized in %v)\n", path, len(b), len(ids), time.Since(t0).Round(time.Millisecond))
	return ids, nil
}

// progressLine draws a progress bar with the running estimate and speed.
func progressLine(p perplexity.Progress) string {
	const width = 30
	done := width * p.Chunk / p.Chunks
	eta := time.Duration(float64(p.Elapsed) * float64(p.Chunks-p.Chunk) / float64(p.Chunk))
	return fmt.Sprintf("[%s%s] %d/%d chunks  PPL %.4f ± %.4f  %.1f tok/s  ETA %v ",
		strings.Repeat("=", done), strings.Repeat(" ", width-done), p.Chunk, p.Chunks, p.PPL, p.Err, p.TokPerSec, eta.Round(time.Second))
}
