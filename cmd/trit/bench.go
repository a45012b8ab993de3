package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"trit/bench"
	"trit/model"
	"trit/model/kvcache"
	_ "trit/model/qwen35" // the hybrid architecture of Bonsai 2 and 27B
	"trit/quant"
)

func init() {
	register(&command{
		name:  "bench",
		usage: "(-m MODEL | --shape SHAPE --type TYPE) [-p 512] [-n 128] [-t 1,2] [-r 5] [--ctx 4096,...] [--json|--jsonl]\n       trit bench (-m MODEL | --shape SHAPE --type TYPE) --batch 1,2,4,8,16 [--verify 2,4,8] [-n 32] [-d 0,4096]\n       trit bench --write-shape SHAPE --type TYPE OUT.gguf",
		short: "measure prompt and generation speed and memory, like llama-bench",
		run:   runBench,
	})
}

const benchHelp = `Measures prompt processing (pp: -p tokens in -b sized forward passes)
and token generation (tg: -n forward passes of one token) in tokens per
second, mean ± sd over -r repetitions after a warm-up, each repetition on an
empty cache. -p, -n, -t, -d, --ctx, -ctk and -ctv take comma lists (every
K/V pair is run).

tg rows show the KV cache bytes per position (all layers) and the bandwidth
ceiling: read bandwidth ÷ (weight bytes + KV bytes read per token), with the
share of it reached. --fill synthetic fills -d positions with deterministic
cache values instead of prefilling them with the model (the rows say
"synthetic fill"): attention's speed and memory do not depend on the values,
and a small machine cannot prefill 100,000 positions in reasonable time.

Synthetic models: --shape builds a temporary GGUF file (deleted afterwards,
memory-mapped like a real file) with the exact architecture and tensor
shapes of a Ternary Bonsai model and random ternary weights. Shapes:
` + "  %s" + `
Types: Q2_0 (Prism group-128, the Bonsai v1 format), PQ2_0, PTQ1_0, TQ2_0,
TQ1_0, Q1_0. Convention: every matrix, the token embedding and the output
head included, is in --type (as in the Bonsai v1 Q2_0 files and the
"all tensors" llama.cpp rows of docs/peers.md); --embd-type and --head-type
override the embedding and head (llama-quantize's default mix for
TQ2_0/TQ1_0 is --embd-type Q4_K --head-type Q6_K). Norms and other small
vectors are F32.

--batch and --verify measure batched decoding instead of pp and tg, like
llama-batched-bench: --batch B runs B independent sequences, each its own
state holding -d tokens, that generate -n tokens together (each forward
pass one step of one token per sequence): aggregate and per-sequence t/s,
and the aggregate relative to B=1. --verify k times one forward step of k
tokens of one sequence at depth -d (the logits of all k, as speculative
decoding verifies a draft) against a step of one token.

--write-shape keeps such a file at OUT.gguf, so that other runtimes can be
measured on the same bytes.

--ctx: the state is allocated for each context size and filled to its end
before the timed test (to at most --max-fill tokens: filling by real prefill
is slow on a small CPU; -d sets the fill explicitly). The table then adds
trit's accounting (KV cache, recurrent state, scratch = Go heap beyond the
state) and the peak RSS of the timed repetitions (VmHWM, reset before them;
it includes the resident pages of the mapped weights).
`

// intsFlag is a comma-list flag of non-negative integers.
type intsFlag struct {
	v   []int
	set bool
}

func (f *intsFlag) String() string {
	s := make([]string, len(f.v))
	for i, n := range f.v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

func (f *intsFlag) Set(s string) error {
	v, err := bench.ParseInts(s)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

type benchOpts struct {
	model, shapes, types, embdType, headType string
	writeShape, dir, output                  string
	prompts, gens, threads, depths, ctxs     intsFlag
	batches, verifies                        intsFlag
	cacheK, cacheV, fill                     string
	bandwidth                                float64
	reps, batch, maxFill                     int
	seed                                     uint64
	noWarmup, asJSON, asJSONL                bool
	cpuProfile                               string
	measured                                 map[int]float64 // bandwidth by thread count
}

func runBench(args []string, stdout, stderr io.Writer) error {
	c := commands["bench"]
	fs := newFlags(c, stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(stderr, "\n"+benchHelp, strings.Join(bench.ShapeNames(), ", "))
	}
	o := benchOpts{
		prompts: intsFlag{v: []int{512}},
		gens:    intsFlag{v: []int{128}},
		threads: intsFlag{v: []int{runtime.NumCPU()}},
	}
	fs.StringVar(&o.model, "m", "", "model `file` (GGUF)")
	fs.StringVar(&o.model, "model", "", "same as -m")
	fs.StringVar(&o.shapes, "shape", "", "synthetic model `shapes` (comma list; see below)")
	fs.StringVar(&o.types, "type", "", "weight `types` of the synthetic models (comma list)")
	fs.StringVar(&o.embdType, "embd-type", "", "token embedding `type` of synthetic models (default: --type)")
	fs.StringVar(&o.headType, "head-type", "", "output head `type` of untied synthetic shapes (default: the embedding's)")
	fs.StringVar(&o.writeShape, "write-shape", "", "write a synthetic model of this `shape` to the file argument and exit")
	fs.StringVar(&o.dir, "dir", "", "`directory` for the temporary synthetic files (default: the system's)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of synthetic weights and prompt tokens")
	fs.Var(&o.prompts, "p", "prompt `lengths` for pp tests (0: none)")
	fs.Var(&o.prompts, "n-prompt", "same as -p")
	fs.Var(&o.gens, "n", "generation `lengths` for tg tests (0: none)")
	fs.Var(&o.gens, "n-gen", "same as -n")
	fs.Var(&o.threads, "t", "thread `counts`")
	fs.Var(&o.threads, "threads", "same as -t")
	fs.Var(&o.depths, "d", "cache `depths` filled before each test (default 0; with --ctx: to the end)")
	fs.Var(&o.depths, "n-depth", "same as -d")
	fs.Var(&o.ctxs, "ctx", "context `sizes`: allocate and fill the cache, report memory")
	fs.Var(&o.batches, "batch", "batched decoding: `sequence counts` B (instead of pp and tg)")
	fs.Var(&o.verifies, "verify", "verify cost: step `sizes` k against one token (instead of pp and tg)")
	fs.IntVar(&o.maxFill, "max-fill", 8192, "most tokens a --ctx test fills by prefill")
	fs.StringVar(&o.cacheK, "ctk", "f16", "KV cache `types` of K (comma list of f32, f16, q8_0, q4_0)")
	fs.StringVar(&o.cacheK, "cache-type-k", "f16", "same as -ctk")
	fs.StringVar(&o.cacheV, "ctv", "f16", "KV cache `types` of V (comma list; every pair with -ctk is run)")
	fs.StringVar(&o.cacheV, "cache-type-v", "f16", "same as -ctv")
	fs.StringVar(&o.fill, "fill", "model", "how -d positions are filled: model (prefill) or synthetic (deterministic cache values, no model run; labelled)")
	fs.Float64Var(&o.bandwidth, "bandwidth", 0, "memory read bandwidth in `GB/s` for the tg ceiling (0: measure it; <0: none)")
	fs.IntVar(&o.reps, "r", 5, "repetitions")
	fs.IntVar(&o.reps, "repetitions", 5, "same as -r")
	fs.IntVar(&o.batch, "b", 512, "tokens per forward pass in prompt processing")
	fs.IntVar(&o.batch, "batch-size", 512, "same as -b")
	fs.BoolVar(&o.noWarmup, "no-warmup", false, "skip the warm-up run")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the measurements to `file`")
	fs.StringVar(&o.output, "o", "md", "output `format`: md, json or jsonl")
	fs.BoolVar(&o.asJSON, "json", false, "same as -o json")
	fs.BoolVar(&o.asJSONL, "jsonl", false, "same as -o jsonl")
	vo := visionBenchOpts{sizes: intsFlag{v: []int{448, 1024}}}
	fs.StringVar(&vo.mmproj, "mmproj", "", "time image encoding with this vision tower `file` (mmproj GGUF)")
	fs.StringVar(&vo.shapes, "vision-shape", "", "time image encoding on synthetic towers of these `shapes` (bonsai2-9b-vision, bonsai2-27b-vision)")
	fs.StringVar(&vo.types, "vision-type", "", "matrix `types` of the synthetic towers (comma list; default Q8_0,BF16)")
	fs.Var(&vo.sizes, "image-size", "square image `sizes` in pixels for image encoding (default 448,1024)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if vo.mmproj != "" || vo.shapes != "" {
		if o.model != "" || o.shapes != "" {
			fmt.Fprintln(stderr, "trit bench: image encoding (--mmproj, --vision-shape) runs apart from -m/--shape")
			return errUsage
		}
		return runVisionBench(&o, &vo, stdout, stderr)
	}
	bad := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "trit bench: "+format+"\n", a...)
		return errUsage
	}
	switch {
	case o.asJSON && o.asJSONL:
		return bad("--json and --jsonl exclude each other")
	case o.asJSON:
		o.output = "json"
	case o.asJSONL:
		o.output = "jsonl"
	}
	if o.output != "md" && o.output != "json" && o.output != "jsonl" {
		return bad("unknown output format %q (md, json, jsonl)", o.output)
	}
	if o.writeShape != "" {
		if fs.NArg() != 1 || o.model != "" || o.shapes != "" || strings.Contains(o.types, ",") {
			return bad("--write-shape takes one --type and one output file argument")
		}
		return writeShape(&o, stderr, fs.Arg(0))
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if (o.model == "") == (o.shapes == "") {
		return bad("give a model file (-m) or synthetic shapes (--shape)")
	}
	if o.reps <= 0 || o.batch <= 0 {
		return bad("-r and -b must be positive")
	}
	for _, t := range o.threads.v {
		if t <= 0 {
			return bad("thread counts must be positive")
		}
	}
	batched := o.batches.set || o.verifies.set
	if batched {
		if len(o.ctxs.v) > 0 || o.prompts.set || strings.Contains(o.cacheK+o.cacheV, ",") {
			return bad("--batch and --verify take -n, -d and one -ctk and -ctv, not -p or --ctx")
		}
		for _, n := range append(slices.Clone(o.batches.v), o.verifies.v...) {
			if n <= 0 {
				return bad("--batch and --verify counts must be positive")
			}
		}
	}
	plan := bench.Plan{Prompts: o.prompts.v, Gens: o.gens.v, Ctxs: o.ctxs.v, MaxFill: o.maxFill}
	if o.depths.set {
		plan.Depths = o.depths.v
	}
	items, err := plan.Items()
	if err != nil {
		return err
	}
	if len(items) == 0 && !batched {
		return bad("nothing to measure: -p and -n are all 0")
	}
	var kvTypes []cachePair
	for _, k := range strings.Split(o.cacheK, ",") {
		for _, v := range strings.Split(o.cacheV, ",") {
			kf, err := kvcache.ParseType(k)
			if err != nil {
				return bad("%v", err)
			}
			vf, err := kvcache.ParseType(v)
			if err != nil {
				return bad("%v", err)
			}
			kvTypes = append(kvTypes, cachePair{kf, vf})
		}
	}
	if o.fill != "model" && o.fill != "synthetic" {
		return bad("--fill is model or synthetic, not %q", o.fill)
	}
	sources, err := o.sources()
	if err != nil {
		fmt.Fprintf(stderr, "trit bench: %v\n", err)
		return errUsage
	}

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if batched {
		out := &output[bench.BatchRow]{format: o.output, w: stdout, table: bench.NewBatchTable(stdout),
			json: bench.WriteBatchJSON, jsonl: bench.WriteBatchJSONL}
		for _, src := range sources {
			if err := o.runBatched(src, kvTypes[0], out, stderr); err != nil {
				return err
			}
		}
		return out.finish()
	}
	out := &output[bench.Row]{format: o.output, w: stdout, table: bench.NewTable(stdout, len(o.ctxs.v) > 0),
		json: bench.WriteJSON, jsonl: bench.WriteJSONL}
	for _, src := range sources {
		if err := o.runSource(src, items, kvTypes, out, stderr); err != nil {
			return err
		}
	}
	return out.finish()
}

// source is a model to measure: a file, or a synthetic model to build.
type source struct {
	path  string
	shape *bench.Shape
	types bench.Types
}

func (o *benchOpts) sources() ([]source, error) {
	if o.model != "" {
		if o.types != "" || o.embdType != "" || o.headType != "" {
			return nil, fmt.Errorf("--type, --embd-type and --head-type apply to --shape only")
		}
		return []source{{path: o.model}}, nil
	}
	if o.types == "" {
		return nil, fmt.Errorf("--shape needs --type")
	}
	var srcs []source
	for _, sn := range strings.Split(o.shapes, ",") {
		s := bench.ShapeByName(strings.TrimSpace(sn))
		if s == nil {
			return nil, fmt.Errorf("unknown shape %q (known: %s)", sn, strings.Join(bench.ShapeNames(), ", "))
		}
		for _, tn := range strings.Split(o.types, ",") {
			t, err := o.typesFor(tn)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, source{shape: s, types: t})
		}
	}
	return srcs, nil
}

func (o *benchOpts) typesFor(weight string) (bench.Types, error) {
	var t bench.Types
	for _, e := range []struct {
		name string
		dst  **quant.Format
	}{{weight, &t.Weight}, {o.embdType, &t.Embd}, {o.headType, &t.Head}} {
		if e.name == "" {
			continue
		}
		f := quant.ByName(strings.TrimSpace(e.name))
		if f == nil {
			return t, fmt.Errorf("unknown type %q", e.name)
		}
		*e.dst = f
	}
	if t.Weight == nil || !t.Weight.Ternary {
		return t, fmt.Errorf("--type %q: synthetic layer weights must be ternary (Q2_0, PQ2_0, PTQ1_0, TQ2_0, TQ1_0, Q1_0)", weight)
	}
	return t, nil
}

func writeShape(o *benchOpts, stderr io.Writer, path string) error {
	s := bench.ShapeByName(o.writeShape)
	if s == nil {
		fmt.Fprintf(stderr, "trit bench: unknown shape %q (known: %s)\n", o.writeShape, strings.Join(bench.ShapeNames(), ", "))
		return errUsage
	}
	t, err := o.typesFor(o.types)
	if err != nil {
		fmt.Fprintf(stderr, "trit bench: %v\n", err)
		return errUsage
	}
	t0 := time.Now()
	if err := bench.WriteSyntheticFile(path, s, t, o.seed); err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "trit bench: wrote %s: %s %s, %d parameters, %s, in %v\n",
		path, s.Name, t, s.Params(), humanBytes(st.Size()), time.Since(t0).Round(time.Millisecond))
	return nil
}

// tempFiles removes the synthetic files on exit, interrupted or not: a
// 27B one is 7 GB.
var tempFiles struct {
	sync.Mutex
	paths map[string]bool
	ch    chan os.Signal // the interrupt handler's, while paths is not empty
}

func addTemp(path string) {
	tempFiles.Lock()
	defer tempFiles.Unlock()
	if tempFiles.paths == nil {
		tempFiles.paths = map[string]bool{}
	}
	tempFiles.paths[path] = true
	if tempFiles.ch != nil {
		return
	}
	// While temporary files exist, Ctrl-C removes them before exiting.
	ch := make(chan os.Signal, 1)
	tempFiles.ch = ch
	signal.Notify(ch, os.Interrupt)
	go func() {
		if _, ok := <-ch; !ok {
			return // the last file was removed: back to the default
		}
		tempFiles.Lock()
		for p := range tempFiles.paths {
			os.Remove(p)
		}
		os.Exit(130)
	}()
}

func removeTemp(path string) {
	tempFiles.Lock()
	defer tempFiles.Unlock()
	delete(tempFiles.paths, path)
	os.Remove(path)
	if len(tempFiles.paths) == 0 && tempFiles.ch != nil {
		signal.Stop(tempFiles.ch)
		close(tempFiles.ch)
		tempFiles.ch = nil
	}
}

// build writes the synthetic model of src to a temporary file.
func (o *benchOpts) build(src source, stderr io.Writer) (string, error) {
	f, err := os.CreateTemp(o.dir, fmt.Sprintf("trit-bench-%s-%s-*.gguf", src.shape.Name, src.types.Weight.Name))
	if err != nil {
		return "", err
	}
	path := f.Name()
	addTemp(path)
	size, _ := bench.Size(src.shape, src.types)
	fmt.Fprintf(stderr, "trit bench: writing synthetic %s %s (%s of weights) to %s\n", src.shape.Name, src.types, humanBytes(size), path)
	t0 := time.Now()
	// No fsync: the file is read back at once, from the page cache.
	_, err = bench.WriteSynthetic(f, src.shape, src.types, o.seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		removeTemp(path)
		return "", err
	}
	fmt.Fprintf(stderr, "trit bench: written in %v\n", time.Since(t0).Round(time.Millisecond))
	return path, nil
}

// bandwidthFor returns the read bandwidth (bytes/s) for the tg ceiling:
// --bandwidth, or measured once per thread count.
func (o *benchOpts) bandwidthFor(threads int, stderr io.Writer) float64 {
	switch {
	case o.bandwidth < 0:
		return 0
	case o.bandwidth > 0:
		return o.bandwidth * 1e9
	}
	if o.measured == nil {
		o.measured = map[int]float64{}
	}
	bw, ok := o.measured[threads]
	if !ok {
		bw = bench.MeasureBandwidth(threads)
		o.measured[threads] = bw
		fmt.Fprintf(stderr, "trit bench: memory read bandwidth %.1f GB/s with %d threads (--bandwidth to set it)\n", bw/1e9, threads)
	}
	return bw
}

// open returns the file of src (building a synthetic one) and its name in
// reports; done removes a synthetic file.
func (o *benchOpts) open(src source, stderr io.Writer) (path, name string, done func(), err error) {
	path, name = src.path, filepath.Base(src.path)
	done = func() {}
	if src.shape != nil {
		if !slices.Contains(model.Architectures(), src.shape.Arch) {
			return "", "", nil, fmt.Errorf("shape %s: architecture %q is not in this build (known: %s)",
				src.shape.Name, src.shape.Arch, strings.Join(model.Architectures(), ", "))
		}
		if path, err = o.build(src, stderr); err != nil {
			return "", "", nil, err
		}
		p := path
		done = func() { removeTemp(p) }
		name = src.shape.Name
	}
	return path, name, done, nil
}

// load loads the file of src at path with threads and the cache pair kv
// and describes it under name.
func load(src source, path, name string, threads int, kv cachePair) (model.Model, bench.ModelDesc, error) {
	m, err := model.Load(path, model.Options{Threads: threads, CacheK: kv.k, CacheV: kv.v})
	if err != nil {
		return nil, bench.ModelDesc{}, err
	}
	desc := bench.Describe(name, m.Info())
	if src.shape != nil {
		desc.Type = src.types.String()
	}
	return m, desc, nil
}

// runBatched runs the --batch and --verify tests of src at every thread
// count, depth and (for --batch) generation length.
func (o *benchOpts) runBatched(src source, kv cachePair, out *output[bench.BatchRow], stderr io.Writer) error {
	path, name, done, err := o.open(src, stderr)
	if err != nil {
		return err
	}
	defer done()
	depths := o.depths.v
	if len(depths) == 0 {
		depths = []int{0}
	}
	cfg := bench.Config{Reps: o.reps, Batch: o.batch, Seed: o.seed, NoWarmup: o.noWarmup}
	for _, threads := range o.threads.v {
		m, desc, err := load(src, path, name, threads, kv)
		if err != nil {
			return err
		}
		err = func() error {
			for _, d := range depths {
				for _, gen := range o.gens.v {
					for _, b := range o.batches.v {
						if gen <= 0 {
							continue
						}
						t := bench.BatchTest{B: b, Gen: gen, Depth: d}
						fmt.Fprintf(stderr, "trit bench: %s %s, %d threads: %s\n", name, desc.Type, threads, t.Name())
						r, err := bench.RunBatch(m, t, cfg)
						if err != nil {
							return err
						}
						if err := out.add(bench.BatchRow{Model: desc, Threads: threads, Batch: r, Time: time.Now()}); err != nil {
							return err
						}
					}
				}
				for _, k := range o.verifies.v {
					t := bench.VerifyTest{K: k, Depth: d}
					fmt.Fprintf(stderr, "trit bench: %s %s, %d threads: %s\n", name, desc.Type, threads, t.Name())
					r, err := bench.RunVerify(m, t, cfg)
					if err != nil {
						return err
					}
					if err := out.add(bench.BatchRow{Model: desc, Threads: threads, Verify: r, Time: time.Now()}); err != nil {
						return err
					}
				}
			}
			return nil
		}()
		if cerr := m.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// cachePair is the K and V element types of one run.
type cachePair struct{ k, v *quant.Format }

// String is the pair's label: one name when K and V agree, else K/V.
func (c cachePair) String() string {
	k, v := strings.ToLower(c.k.Name), strings.ToLower(c.v.Name)
	if k == v {
		return k
	}
	return k + "/" + v
}

func (o *benchOpts) runSource(src source, items []bench.Item, kvTypes []cachePair, out *output[bench.Row], stderr io.Writer) error {
	path, name, done, err := o.open(src, stderr)
	if err != nil {
		return err
	}
	defer done()
	for _, threads := range o.threads.v {
		for _, kv := range kvTypes {
			m, desc, err := load(src, path, name, threads, kv)
			if err != nil {
				return err
			}
			for _, it := range items {
				fmt.Fprintf(stderr, "trit bench: %s %s, %d threads, %s cache: %s", name, desc.Type, threads, kv, it.Test.Name())
				if it.Ctx > 0 {
					fmt.Fprintf(stderr, ", context %d", it.Ctx)
				}
				fmt.Fprintln(stderr)
				r, err := bench.Run(m, it.Test, bench.Config{Reps: o.reps, Batch: o.batch, Ctx: it.Ctx, Seed: o.seed, NoWarmup: o.noWarmup, Synthetic: o.fill == "synthetic"})
				if errors.Is(err, bench.ErrMemory) {
					// Skip this context, measure the others.
					fmt.Fprintf(stderr, "trit bench: skipped: %v\n", err)
					continue
				}
				if err != nil {
					m.Close()
					return err
				}
				row := bench.Row{Model: desc, Threads: threads, KVType: kv.String(), Result: r, Time: time.Now(),
					KVTokenBytes: m.Info().KVTokenBytes}
				if it.Test.Gen > 0 {
					row.Bandwidth = o.bandwidthFor(threads, stderr)
				}
				if err := out.add(row); err != nil {
					m.Close()
					return err
				}
			}
			if err := m.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// output streams report rows of type R in the chosen format (json
// collects them).
type output[R any] struct {
	format string
	w      io.Writer
	table  interface{ Add(R) error }
	json   func(io.Writer, []R) error
	jsonl  func(io.Writer, R) error
	rows   []R
}

func (o *output[R]) add(r R) error {
	switch o.format {
	case "jsonl":
		return o.jsonl(o.w, r)
	case "json":
		o.rows = append(o.rows, r)
		return nil
	}
	return o.table.Add(r)
}

// finish writes what the format holds back: the JSON array, or a table's
// last part.
func (o *output[R]) finish() error {
	if o.format == "json" {
		return o.json(o.w, o.rows)
	}
	if f, ok := o.table.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
