package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"trit/engine"
	"trit/grammar"
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
	var grammarFile, schemaFile string
	fs.StringVar(&grammarFile, "grammar-file", "", "constrain the output to the GBNF grammar in `file` (llama.cpp syntax)")
	fs.StringVar(&schemaFile, "json-schema", "", "constrain the output to JSON valid under the JSON Schema in `file`")
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
	g, err := constraintGrammar(grammarFile, schemaFile)
	if err != nil {
		return err
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
	p := engine.Params{MaxTokens: n, Sample: sf.params(fs, l.eng), Stop: stops, IgnoreEOG: ignoreEOS}
	if g != nil {
		if p.Constraint, err = g.NewConstraint(grammar.TokenizerVocab(l.eng.Tok, l.eng.EOG), grammar.Options{}); err != nil {
			return err
		}
	}
	res, err := l.eng.GenerateInput(ctx, st, in, p, func(s string) error { _, err := io.WriteString(stdout, s); return err })
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trit: prompt %d tokens in %v (%.1f tok/s); generated %d tokens (%.1f tok/s); finish: %s\n",
		res.PromptTokens, res.PromptTime.Round(1e6), res.PromptTPS(), len(res.Tokens), res.GenTPS(), res.FinishReason)
	return nil
}

// constraintGrammar reads the grammar of --grammar-file or --json-schema;
// nil when neither is given.
func constraintGrammar(grammarFile, schemaFile string) (*grammar.Grammar, error) {
	switch {
	case grammarFile != "" && schemaFile != "":
		return nil, fmt.Errorf("give --grammar-file or --json-schema, not both")
	case grammarFile != "":
		src, err := os.ReadFile(grammarFile)
		if err != nil {
			return nil, err
		}
		g, err := grammar.Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", grammarFile, err)
		}
		return g, nil
	case schemaFile != "":
		src, err := os.ReadFile(schemaFile)
		if err != nil {
			return nil, err
		}
		g, err := grammar.FromJSONSchema(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", schemaFile, err)
		}
		return g, nil
	}
	return nil, nil
}
