package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"trit/hub"
	"trit/store"
)

// demoHint tells a user of the demo model how to get a real one.
const demoHint = "trit: for a real model: trit pull prism-ml/Ternary-Bonsai-8B-gguf, then -m prism-ml/Ternary-Bonsai-8B-gguf (or -hf NAME pulls on first use)"

// registerHub registers -hf, llama.cpp's flag for a model pulled from the
// Hugging Face Hub on first use.
func (m *modelFlags) registerHub(fs *flag.FlagSet) {
	fs.StringVar(&m.hf, "hf", "", "Hugging Face `repo[:quant]`: the pulled model, pulled first if not yet (see trit pull)")
	fs.StringVar(&m.hf, "hf-repo", "", "same as -hf")
}

func openStore() (*store.Store, error) {
	dir, err := store.DefaultDir()
	if err != nil {
		return nil, err
	}
	return store.Open(dir)
}

// resolve turns -m and -hf into the path of a GGUF file in m.path: -m
// names a file or a pulled model, -hf a model that is pulled if need be.
// An empty m.path stays empty (the demo model).
func (m *modelFlags) resolve(stderr io.Writer) error {
	switch {
	case m.hf != "" && m.path != "":
		return errors.New("give -m or -hf, not both")
	case m.hf != "":
		return m.useStored(m.hf, true, stderr)
	case m.path == "":
		return nil
	}
	_, err := os.Stat(m.path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // a file (or a problem the loader reports)
	}
	if _, _, perr := hub.ParseRef(m.path); perr != nil || (strings.EqualFold(filepath.Ext(m.path), ".gguf") && !strings.Contains(m.path, ":")) {
		return nil // a file name, not a model name: the loader reports it missing
	}
	return m.useStored(m.path, false, stderr)
}

// useStored points m.path at the pulled model name, pulling it first when
// pull is set and it is not in the store.
func (m *modelFlags) useStored(name string, pull bool, stderr io.Writer) error {
	st, err := openStore()
	if err != nil {
		return err
	}
	mod, err := st.Find(name)
	if errors.Is(err, store.ErrNotFound) {
		if !pull {
			return fmt.Errorf("no file %q, nor a pulled model of that name: pull it with \"trit pull %s\", or use -hf %s to pull it on first use", name, name, name)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		mod, err = pullModel(ctx, st, name, store.PullOptions{}, stderr)
	}
	if err != nil {
		return err
	}
	if mod.Pack {
		return fmt.Errorf("%s is a pack of safetensors files (MLX), and trit runs GGUF files: pull a -gguf repository", mod.Name())
	}
	if err := st.Touch(mod); err != nil {
		fmt.Fprintf(stderr, "trit: %v\n", err) // the model still runs
	}
	fmt.Fprintf(stderr, "trit: model %s\n", mod.Name())
	m.path = mod.Path()
	return nil
}

// pullModel pulls ref into st with progress on stderr.
func pullModel(ctx context.Context, st *store.Store, ref string, opt store.PullOptions, stderr io.Writer) (*store.Model, error) {
	b := newBar(stderr)
	opt.Log = func(format string, args ...any) {
		b.endLine()
		fmt.Fprintf(stderr, "trit: "+format+"\n", args...)
	}
	opt.Meter = b
	return st.Pull(ctx, hub.New(), ref, opt)
}
