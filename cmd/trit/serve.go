package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"trit/bench"
	"trit/chat"
	"trit/model/kvcache"
	"trit/server"
	"trit/vision"
)

func init() {
	register(&command{
		name:  "serve",
		usage: "[-m MODEL] [--mmproj P] [--host 127.0.0.1] [--port 8080] [--parallel N] [-c CTX] [--api-key K] ...",
		short: "serve the OpenAI (chat, completions, responses), Anthropic Messages and Ollama HTTP APIs",
		run:   runServe,
	})
}

func runServe(args []string, stdout, stderr io.Writer) error {
	c := commands["serve"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	mf.register(fs)
	var host, apiKey, alias, logFormat string
	var port, parallel, queue, kvBudget int
	var drain time.Duration
	fs.StringVar(&host, "host", "127.0.0.1", "address to listen on")
	fs.IntVar(&port, "port", 8080, "port to listen on (0: any free port)")
	fs.IntVar(&parallel, "parallel", 1, "slots: requests generated together in one batch (-c is per slot)")
	fs.IntVar(&parallel, "np", 1, "same as --parallel")
	fs.IntVar(&kvBudget, "kv-budget", 0, "`MiB` of KV cache pages shared by all slots (0: what the machine has available beside the weights)")
	fs.IntVar(&queue, "queue", 64, "requests that may wait for a slot; beyond them the server answers 503")
	fs.StringVar(&apiKey, "api-key", os.Getenv("TRIT_API_KEY"), "require this key, as a bearer token or X-Api-Key (default $TRIT_API_KEY; empty: none)")
	fs.StringVar(&alias, "alias", "", "model id reported by /v1/models (default: the file name)")
	fs.DurationVar(&drain, "drain-timeout", 30*time.Second, "on SIGTERM, how long to let requests in flight finish")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	var vf visionFlags
	var allowURLs bool
	vf.register(fs)
	fs.BoolVar(&allowURLs, "allow-image-urls", false, "fetch http(s) image URLs named by requests (size and time limited); without it only data: URLs are accepted")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trit serve: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	var h slog.Handler
	switch logFormat {
	case "text":
		h = slog.NewTextHandler(stderr, nil)
	case "json":
		h = slog.NewJSONHandler(stderr, nil)
	default:
		fmt.Fprintf(stderr, "trit serve: --log-format must be text or json, not %q\n", logFormat)
		return errUsage
	}
	log := slog.New(h)
	srv, err := server.New(server.Config{
		Addr:     net.JoinHostPort(host, strconv.Itoa(port)),
		Parallel: parallel, Context: mf.ctx, Queue: queue, APIKey: apiKey,
		DrainTimeout: drain, Logger: log,
		Images: server.Images{AllowURLs: allowURLs, MaxBytes: vf.maxImageBytes, MaxCount: vf.maxImagesPerTurn, Budget: vf.budget()},
	})
	if err != nil {
		return err
	}
	// SIGTERM (as from a service manager) and Ctrl-C both drain and exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Listen before loading, so that /health answers 503 meanwhile.
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	mf.kvBudget = kvcache.NewBudget(int64(kvBudget) << 20)
	l, err := mf.load(stderr)
	if err == nil {
		defer l.Close()
		if kvBudget == 0 {
			setDefaultBudget(mf.kvBudget, l, stderr)
		}
		var lz *vision.Lazy
		if lz, err = vf.lazy(mf.threads, stderr); err == nil {
			if lz != nil {
				defer lz.Close()
			}
			err = loadBackend(srv, l, mf.path, alias, mf.kvBudget, lz)
		}
	}
	if err != nil {
		cancel()
		if serr := <-served; serr != nil {
			return serr // e.g. the port is taken
		}
		return err
	}
	err = <-served // after Run, the scheduler has stopped: the model may close
	log.Info("stopped")
	return err
}

// loadBackend hands the loaded model, with its chat template, to srv.
func loadBackend(srv *server.Server, l *loaded, path, alias string, budget *kvcache.Budget, lz *vision.Lazy) error {
	src, _ := l.meta.String("tokenizer.chat_template")
	tmpl, err := chat.NewTemplate(src)
	if err != nil {
		return fmt.Errorf("chat template: %w", err)
	}
	id := alias
	if id == "" {
		id = "trit-demo"
		if path != "" {
			id = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
	}
	return srv.Load(&server.Backend{Engine: l.eng, Template: tmpl, ModelID: id, KVBudget: budget, Vision: lz})
}

// setDefaultBudget sizes the KV budget to the memory available now, less
// the weights not yet resident (the mapping counts as page cache, which
// MemAvailable includes) and a margin for scratch, so that slots cannot
// grow into an out-of-memory kill.
func setDefaultBudget(b *kvcache.Budget, l *loaded, stderr io.Writer) {
	avail, err := bench.MemAvailable()
	if err != nil {
		return // not Linux: unbounded, as before
	}
	info := l.eng.Model.Info()
	limit := avail - info.WeightBytes - avail/10
	limit = max(limit, 64<<20)
	b.SetLimit(limit)
	fmt.Fprintf(stderr, "trit: KV budget %s shared by all slots (--kv-budget to change)\n", humanBytes(limit))
}
