package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"trit/chat"
	"trit/engine"
	"trit/model"
	"trit/tokenizer"
	"trit/vision"
)

func init() {
	register(&command{
		name:  "chat",
		usage: "[-m MODEL] [-c CTX] [--sys PROMPT] [--no-think] ...",
		short: "chat with a model interactively (/image PATH, /think on|off, /reset, /exit; Ctrl-C stops an answer)",
		run:   runChat,
	})
}

func runChat(args []string, stdout, stderr io.Writer) error {
	return chatLoop(args, os.Stdin, stdout, stderr, true)
}

// chatLoop runs the interactive chat over in; interrupts (Ctrl-C) cancel
// the answer being generated when handleSignals is set.
func chatLoop(args []string, in io.Reader, stdout, stderr io.Writer, handleSignals bool) error {
	c := commands["chat"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	var sf sampleFlags
	mf.register(fs)
	sf.register(fs)
	var system string
	var noThink bool
	var n int
	fs.StringVar(&system, "sys", "", "system prompt")
	fs.StringVar(&system, "system-prompt", "", "same as --sys")
	fs.BoolVar(&noThink, "no-think", false, "start with thinking off (same as /think off)")
	fs.IntVar(&n, "n", -1, "most tokens per answer (-1: until the context is full)")
	var vf visionFlags
	vf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
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
	// images are the conversation's images in the order of their markers;
	// pending are those /image attached to the next message.
	var images, pending []*vision.Image
	src, _ := l.meta.String("tokenizer.chat_template")
	tmpl, err := chat.NewTemplate(src)
	if err != nil {
		return fmt.Errorf("chat template: %w", err)
	}
	if src == "" {
		fmt.Fprintln(stderr, "trit: the model has no chat template: using ChatML")
	}
	thinking := !noThink
	var msgs []chat.Message
	if system != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: system})
	}
	var cached []int // keys of the elements the state holds (vision.Sequence.Keys), to reuse the common prefix
	fmt.Fprintln(stderr, "trit: type a message; /image PATH, /think on|off, /reset, /exit. Ctrl-C stops an answer, Ctrl-D quits.")

	interrupts := make(chan os.Signal, 1)
	if handleSignals {
		signal.Notify(interrupts, os.Interrupt)
		defer signal.Stop(interrupts)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		fmt.Fprint(stdout, "> ")
		if !sc.Scan() {
			fmt.Fprintln(stdout)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case line == "/exit" || line == "/quit":
			return nil
		case line == "/reset":
			msgs = msgs[:0]
			if system != "" {
				msgs = append(msgs, chat.Message{Role: "system", Content: system})
			}
			st.Reset()
			cached = nil
			images, pending = nil, nil
			fmt.Fprintln(stdout, "(conversation reset)")
			continue
		case strings.HasPrefix(line, "/image"):
			path := strings.TrimSpace(strings.TrimPrefix(line, "/image"))
			if path == "" {
				fmt.Fprintln(stdout, "(use /image PATH)")
				continue
			}
			if len(pending) >= vf.maxImagesPerTurn {
				fmt.Fprintf(stdout, "(at most %d images per message: --image-max-count)\n", vf.maxImagesPerTurn)
				continue
			}
			img, err := vf.encodeFiles(lz, []string{path}, stderr)
			if err != nil {
				fmt.Fprintf(stdout, "(image not attached: %v)\n", err)
				continue
			}
			img[0].Pixels = nil // the conversation keeps only the rows
			pending = append(pending, img...)
			fmt.Fprintf(stdout, "(image attached to the next message: %d tokens)\n", img[0].N())
			continue
		case strings.HasPrefix(line, "/think"):
			switch strings.TrimSpace(strings.TrimPrefix(line, "/think")) {
			case "on":
				thinking = true
			case "off":
				thinking = false
			default:
				fmt.Fprintln(stdout, "(use /think on or /think off)")
				continue
			}
			fmt.Fprintf(stdout, "(thinking %s)\n", map[bool]string{true: "on", false: "off"}[thinking])
			continue
		case strings.HasPrefix(line, "/"):
			fmt.Fprintln(stdout, "(commands: /image PATH, /think on|off, /reset, /exit)")
			continue
		}
		line = strings.ReplaceAll(line, vision.Marker, "") // markers come from /image only
		msgs = append(msgs, chat.Message{Role: "user", Content: strings.Repeat(vision.Marker, len(pending)) + line})
		images, pending = append(images, pending...), nil
		think := thinking
		prompt, err := tmpl.Render(msgs, chat.Options{AddGenerationPrompt: true, EnableThinking: &think})
		if err != nil {
			return fmt.Errorf("chat template: %w", err)
		}
		seq, err := vision.BuildSequence(l.eng.Tok, prompt, images, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
		if err != nil {
			return fmt.Errorf("chat template: %w", err)
		}
		if len(seq.Tokens) == 0 {
			return fmt.Errorf("chat template rendered an empty prompt")
		}
		if len(images) == 0 {
			seq.Pos = nil // plain text: positions follow the state
		}
		// Keep the cached positions the new prompt shares (the template
		// may rewrite earlier turns, e.g. drop their reasoning); at least
		// one prompt token must run to produce logits. Images compare by
		// their content hash.
		keys := seq.Keys()
		keep := model.CommonPrefix(cached, keys[:len(keys)-1])
		if !st.Truncate(keep) {
			st.Reset()
			keep = 0
		}
		cached = cached[:keep]
		fresh := seq.Slice(keep, len(keys))
		show := func(reasoning, content string) {
			if reasoning != "" {
				fmt.Fprint(stdout, "\x1b[2m"+reasoning+"\x1b[0m") // dim: thinking
			}
			fmt.Fprint(stdout, content)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
				cancel()
			case <-done:
			}
		}()
		rp := &chat.ReasoningParser{StartInReasoning: strings.HasSuffix(prompt, "<think>\n")}
		res, err := l.eng.GenerateInput(ctx, st, fresh, engine.Params{MaxTokens: n, Sample: sf.params(fs, l.eng)}, func(s string) error {
			show(rp.Write(s))
			return nil
		})
		show(rp.Flush())
		close(done)
		cancel()
		fmt.Fprintln(stdout)
		if err != nil {
			return err
		}
		if res.FinishReason == "cancelled" {
			fmt.Fprintln(stdout, "(stopped)")
		}
		reasoning, content := chat.SplitReasoning(res.Text)
		if strings.HasSuffix(prompt, "<think>\n") && !strings.Contains(res.Text, "<think>") {
			reasoning, content = chat.SplitReasoning("<think>\n" + res.Text)
		}
		msgs = append(msgs, chat.Message{Role: "assistant", Content: content, ReasoningContent: reasoning})
		cached = append(append(cached, keys[keep:]...), res.Tokens...)
		if st.Pos() != len(cached) {
			// The last sampled token was not fed back; the state and the
			// cache must agree for prefix reuse.
			cached = cached[:st.Pos()]
		}
		fmt.Fprintf(stderr, "(%d prompt tokens at %.1f tok/s, %d generated at %.1f tok/s)\n",
			len(fresh.Tokens), res.PromptTPS(), len(res.Tokens), res.GenTPS())
	}
}
