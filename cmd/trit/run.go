package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"trit/engine"
	"trit/tokenizer"
	"trit/vision"
)

func init() {
	register(&command{
		name:  "run",
		usage: "[-m MODEL] [-p PROMPT | PROMPT] [--mmproj P --image I ...] [-n N] [-c CTX] [-t THREADS] [--temp T] ...",
		short: "complete a prompt, streaming the text to stdout",
		run:   runRun,
	})
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runRun(args []string, stdout, stderr io.Writer) error {
	c := commands["run"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	var sf sampleFlags
	mf.register(fs)
	sf.register(fs)
	var prompt string
	var n int
	var ignoreEOS, special bool
	var stops stringList
	fs.StringVar(&prompt, "p", "", "prompt text")
	fs.StringVar(&prompt, "prompt", "", "same as -p")
	fs.IntVar(&n, "n", 128, "tokens to generate (-1: until the context is full)")
	fs.IntVar(&n, "n-predict", 128, "same as -n")
	fs.BoolVar(&ignoreEOS, "ignore-eos", false, "keep generating past end-of-generation tokens")
	fs.BoolVar(&special, "special", true, "parse special tokens (e.g. <|im_start|>) in the prompt")
	fs.Var(&stops, "r", "stop string (repeatable)")
	fs.Var(&stops, "reverse-prompt", "same as -r")
	var vf visionFlags
	var images stringList
	vf.register(fs)
	fs.Var(&images, "image", "image `file` (repeatable), placed at each "+vision.Marker+" in the prompt, or before it; needs --mmproj")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(images) > 0 && vf.mmproj == "" {
		return errNoVision
	}
	if fs.NArg() > 0 {
		if prompt != "" {
			fmt.Fprintln(stderr, "trit run: give the prompt with -p or as arguments, not both")
			return errUsage
		}
		prompt = strings.Join(fs.Args(), " ")
	}
	l, err := mf.load(stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	st, err := l.newState(mf.ctx, stderr)
	if err != nil {
		return err
	}
	lz, err := vf.lazy(mf.threads, stderr)
	if err != nil {
		return err
	}
	if lz != nil {
		defer lz.Close()
	}
	imgs, err := vf.encodeFiles(lz, images, stderr)
	if err != nil {
		return err
	}
	seq, err := vision.BuildSequence(l.eng.Tok, prompt, imgs, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: special})
	if err != nil {
		return err
	}
	if len(seq.Tokens) == 0 {
		return fmt.Errorf("the prompt is empty and the model adds no BOS token: give a prompt")
	}
	in := seq.Input
	if len(imgs) == 0 {
		in.Pos = nil // plain text: positions follow the state
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprint(stdout, prompt)
	res, err := l.eng.GenerateInput(ctx, st, in, engine.Params{MaxTokens: n, Sample: sf.params(fs, l.eng), Stop: stops, IgnoreEOG: ignoreEOS},
		func(s string) error { _, err := io.WriteString(stdout, s); return err })
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trit: prompt %d tokens in %v (%.1f tok/s); generated %d tokens (%.1f tok/s); finish: %s\n",
		res.PromptTokens, res.PromptTime.Round(1e6), res.PromptTPS(), len(res.Tokens), res.GenTPS(), res.FinishReason)
	return nil
}
