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
)

func init() {
	register(&command{
		name:  "chat",
		usage: "[-m MODEL] [-c CTX] [--sys PROMPT] [--no-think] ...",
		short: "chat with a model interactively (/think on|off, /reset, /exit; Ctrl-C stops an answer)",
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
	var cached []int // tokens the state holds, to reuse the common prefix
	fmt.Fprintln(stderr, "trit: type a message; /think on|off, /reset, /exit. Ctrl-C stops an answer, Ctrl-D quits.")

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
			fmt.Fprintln(stdout, "(conversation reset)")
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
			fmt.Fprintln(stdout, "(commands: /think on|off, /reset, /exit)")
			continue
		}
		msgs = append(msgs, chat.Message{Role: "user", Content: line})
		think := thinking
		prompt, err := tmpl.Render(msgs, chat.Options{AddGenerationPrompt: true, EnableThinking: &think})
		if err != nil {
			return fmt.Errorf("chat template: %w", err)
		}
		ids := l.eng.Tok.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
		if len(ids) == 0 {
			return fmt.Errorf("chat template rendered an empty prompt")
		}
		// Keep the cached positions the new prompt shares (the template
		// may rewrite earlier turns, e.g. drop their reasoning); at least
		// one prompt token must run to produce logits.
		keep := model.CommonPrefix(cached, ids[:len(ids)-1])
		if !st.Truncate(keep) {
			st.Reset()
			keep = 0
		}
		cached = cached[:keep]
		fresh := ids[keep:]
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
		res, err := l.eng.Generate(ctx, st, fresh, engine.Params{MaxTokens: n, Sample: sf.params(fs, l.eng)}, func(s string) error {
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
		cached = append(append(cached, fresh...), res.Tokens...)
		if st.Pos() != len(cached) {
			// The last sampled token was not fed back; the state and the
			// cache must agree for prefix reuse.
			cached = cached[:st.Pos()]
		}
		fmt.Fprintf(stderr, "(%d prompt tokens at %.1f tok/s, %d generated at %.1f tok/s)\n",
			len(fresh), res.PromptTPS(), len(res.Tokens), res.GenTPS())
	}
}
