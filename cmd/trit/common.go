package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"trit/engine"
	"trit/gguf"
	"trit/model"
	"trit/model/checkpoint"
	"trit/model/demo"
	"trit/model/kvcache"
	_ "trit/model/llama"  // register the llama-family architectures
	_ "trit/model/qwen35" // and the Qwen3.5/3.6 hybrids
	"trit/quant"
	"trit/sample"
	"trit/tokenizer"
)

// modelFlags are the flags shared by the commands that load a model; names
// follow llama.cpp's where one exists.
type modelFlags struct {
	path    string
	hf      string
	threads int
	ctx     int
	batch   int
	exact   bool
	// cacheK and cacheV are the KV cache element types; cache sets both.
	cacheK, cacheV cacheType
	noRotate       bool
	// kvBudget, if set, is the shared page budget of every state (serve).
	kvBudget *kvcache.Budget
}

func (m *modelFlags) register(fs *flag.FlagSet) { m.registerCache(fs, quant.F16) }

// cacheType is a KV cache element type flag (kvcache.ParseType).
type cacheType struct{ f *quant.Format }

func (c *cacheType) String() string {
	if c == nil || c.f == nil {
		return ""
	}
	return strings.ToLower(c.f.Name)
}

func (c *cacheType) Set(s string) error {
	f, err := kvcache.ParseType(s)
	if err != nil {
		return err
	}
	c.f = f
	return nil
}

// bothTypes sets K and V together (--cache-type).
type bothTypes struct{ k, v *cacheType }

func (b bothTypes) String() string { return b.k.String() }
func (b bothTypes) Set(s string) error {
	if err := b.k.Set(s); err != nil {
		return err
	}
	return b.v.Set(s)
}

// options returns the model options the flags ask for.
func (m *modelFlags) options() model.Options {
	return model.Options{Threads: m.threads, Exact: m.exact, CacheK: m.cacheK.f, CacheV: m.cacheV.f, CacheNoRotate: m.noRotate, KVBudget: m.kvBudget}
}

// registerCache registers the flags with cache as the default KV cache
// type.
func (m *modelFlags) registerCache(fs *flag.FlagSet, cache *quant.Format) {
	m.cacheK.f, m.cacheV.f = cache, cache
	fs.StringVar(&m.path, "m", "", "model `file` (GGUF), folder (MLX pack, Hugging Face checkpoint) or pulled name (trit list); empty: the built-in demo model")
	fs.StringVar(&m.path, "model", "", "same as -m")
	m.registerHub(fs)
	fs.IntVar(&m.threads, "t", 0, "threads (0: all cores)")
	fs.IntVar(&m.threads, "threads", 0, "same as -t")
	fs.IntVar(&m.ctx, "c", 4096, "context size in tokens (capped at the model's trained context)")
	fs.IntVar(&m.ctx, "ctx-size", 4096, "same as -c")
	fs.IntVar(&m.batch, "b", 512, "prompt tokens per forward pass")
	fs.IntVar(&m.batch, "batch-size", 512, "same as -b")
	fs.Var(&m.cacheK, "ctk", "KV cache `type` of K: f32, f16, q8_0 or q4_0")
	fs.Var(&m.cacheK, "cache-type-k", "same as -ctk")
	fs.Var(&m.cacheV, "ctv", "KV cache `type` of V: f32, f16, q8_0 or q4_0")
	fs.Var(&m.cacheV, "cache-type-v", "same as -ctv")
	fs.Var(bothTypes{&m.cacheK, &m.cacheV}, "cache-type", "KV cache `type` of both K and V")
	fs.BoolVar(&m.noRotate, "no-cache-rotate", false, "store quantized K/V unrotated (llama.cpp's LLAMA_ATTN_ROT_DISABLE)")
	fs.BoolVar(&m.exact, "exact", false, "compute on exactly dequantized weights with float activations (slow reference path)")
}

// loaded is a model with everything needed to generate.
type loaded struct {
	eng  *engine.Engine
	meta *gguf.Metadata // the model's metadata in GGUF keys (chat template)
	demo bool
}

func (l *loaded) Close() error { return l.eng.Model.Close() }

// load opens the model named by the flags, or builds the demo model, and
// reports progress and timing on stderr.
func (m *modelFlags) load(stderr io.Writer) (*loaded, error) {
	if err := m.resolve(stderr); err != nil {
		return nil, err
	}
	t0 := time.Now()
	var src model.Source
	demoModel := m.path == ""
	if demoModel {
		fmt.Fprintln(stderr, "trit: no -m given: using the built-in demo model (random ternary weights; its output is meaningless)")
		fmt.Fprintln(stderr, demoHint)
		f, err := demo.File()
		if err != nil {
			return nil, err
		}
		src = model.FromGGUF(f)
	} else {
		var err error
		if src, err = openSource(m.path, stderr); err != nil {
			return nil, err
		}
		prefault(src, stderr)
	}
	mod, err := model.FromSource(src, m.options())
	if err != nil {
		src.Close()
		return nil, err
	}
	meta := src.Meta()
	tok, err := tokenizer.FromMetadata(meta)
	if err != nil {
		mod.Close()
		return nil, err
	}
	eng := &engine.Engine{Model: mod, Tok: tok, EOG: tokenizer.EndOfGeneration(meta, tok), Batch: m.batch,
		Sampling: sample.FromMetadata(meta, sample.DefaultParams())}
	info := mod.Info()
	fmt.Fprintf(stderr, "trit: %s model, %d layers, hidden %d, vocab %d, %s of weights; loaded in %v\n",
		info.Arch, info.Layers, info.Hidden, info.Vocab, humanBytes(info.WeightBytes), time.Since(t0).Round(time.Millisecond))
	return &loaded{eng: eng, meta: meta, demo: demoModel}, nil
}

// openSource opens a GGUF file, or a folder holding an MLX pack or a
// Hugging Face checkpoint.
func openSource(path string, stderr io.Writer) (model.Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		fmt.Fprintf(stderr, "trit: loading %s (folder)\n", path)
		return checkpoint.Open(path)
	}
	fmt.Fprintf(stderr, "trit: loading %s (%s)\n", path, humanBytes(st.Size()))
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	return model.FromGGUF(f), nil
}

// prefault reads every page of the tensor data once, printing a progress
// line, so that a large model's page faults (and MLX repacks) happen here,
// visibly, rather than during the first tokens (and their timing).
func prefault(src model.Source, stderr io.Writer) {
	var total, done int64
	for _, t := range src.Tensors() {
		total += t.Size
	}
	if total < 64<<20 {
		return // small files load faster than a progress line is worth
	}
	var sink byte
	last := -1
	for _, t := range src.Tensors() {
		data, err := t.Data()
		if err != nil {
			return // the model loader reports the problem
		}
		for i := 0; i < len(data); i += 4096 {
			sink ^= data[i]
		}
		done += t.Size
		if pct := int(done * 100 / total); pct/5 != last/5 {
			last = pct
			fmt.Fprintf(stderr, "\rtrit: loading weights %3d%%", pct)
		}
	}
	fmt.Fprintln(stderr)
	prefaultSink = sink
}

// prefaultSink keeps the compiler from dropping prefault's reads.
var prefaultSink byte

// newState returns a state of the requested context, capped at the model's.
func (l *loaded) newState(ctx int, stderr io.Writer) (model.State, error) {
	info := l.eng.Model.Info()
	if info.ContextLen > 0 && ctx > info.ContextLen {
		ctx = info.ContextLen
	}
	st, err := l.eng.Model.NewState(ctx)
	if err != nil {
		return nil, err
	}
	var kv, rec int64
	for k, v := range st.Bytes() {
		if k == "kv" {
			kv += v
		} else {
			rec += v
		}
	}
	fmt.Fprintf(stderr, "trit: context %d tokens: KV cache %s, recurrent state %s\n", ctx, humanBytes(kv), humanBytes(rec))
	return st, nil
}

// sampleFlags are the sampling flags, with llama.cpp's names.
type sampleFlags struct {
	p    sample.Params
	seed int64
}

func (s *sampleFlags) register(fs *flag.FlagSet) {
	d := sample.DefaultParams()
	s.p = d
	fs.Func("temp", fmt.Sprintf("temperature; 0 is greedy (default: the model's, else %g)", d.Temperature), floatSetter(&s.p.Temperature))
	fs.IntVar(&s.p.TopK, "top-k", d.TopK, "top-k sampling (0: off; default: the model's, else 20)")
	fs.Func("top-p", fmt.Sprintf("top-p (nucleus) sampling (1: off; default: the model's, else %g)", d.TopP), floatSetter(&s.p.TopP))
	fs.Func("min-p", "min-p sampling (default 0: off)", floatSetter(&s.p.MinP))
	fs.Func("repeat-penalty", "penalty for repeated tokens (default 1: off)", floatSetter(&s.p.RepeatPenalty))
	fs.IntVar(&s.p.RepeatLastN, "repeat-last-n", 64, "tokens considered by the penalties")
	fs.Func("presence-penalty", "presence penalty (default 0)", floatSetter(&s.p.PresencePenalty))
	fs.Func("frequency-penalty", "frequency penalty (default 0)", floatSetter(&s.p.FrequencyPenalty))
	fs.Int64Var(&s.seed, "s", -1, "random seed (-1: from the clock)")
	fs.Int64Var(&s.seed, "seed", -1, "same as -s")
}

// params returns the sampler settings: the flags given on the command
// line over the model's defaults (engine.Defaults).
func (s *sampleFlags) params(fs *flag.FlagSet, eng *engine.Engine) sample.Params {
	p := eng.Defaults()
	apply := map[string]func(){
		"temp":              func() { p.Temperature = s.p.Temperature },
		"top-k":             func() { p.TopK = s.p.TopK },
		"top-p":             func() { p.TopP = s.p.TopP },
		"min-p":             func() { p.MinP = s.p.MinP },
		"repeat-penalty":    func() { p.RepeatPenalty = s.p.RepeatPenalty },
		"repeat-last-n":     func() { p.RepeatLastN = s.p.RepeatLastN },
		"presence-penalty":  func() { p.PresencePenalty = s.p.PresencePenalty },
		"frequency-penalty": func() { p.FrequencyPenalty = s.p.FrequencyPenalty },
	}
	fs.Visit(func(f *flag.Flag) {
		if a := apply[f.Name]; a != nil {
			a()
		}
	})
	if s.seed < 0 {
		p.Seed = uint64(time.Now().UnixNano())
	} else {
		p.Seed = uint64(s.seed)
	}
	return p
}

func floatSetter(dst *float32) func(string) error {
	return func(v string) error {
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil {
			return fmt.Errorf("not a number: %q", v)
		}
		*dst = float32(f)
		return nil
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
