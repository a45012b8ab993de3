// Package model loads language models into registered architectures and
// runs their forward pass over batches of tokens.
//
// An architecture package (model/llama, model/qwen35, ...) registers a
// constructor under the GGUF `general.architecture` names it serves. It
// reads its tensors and hyperparameters from a Source, which speaks GGUF
// names whatever the container: Load opens a GGUF file, package
// model/checkpoint opens MLX packs and Hugging Face folders. Weights stay
// in the file's memory map where their layout allows: the kernels compute
// on the packed blocks directly.
package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"trit/gguf"
	"trit/kernels"
	"trit/model/kvcache"
	"trit/quant"
)

// Model is a loaded language model.
type Model interface {
	// Info describes the model: architecture, sizes, memory.
	Info() *Info
	// NewState returns an empty sequence state (KV cache, recurrent state)
	// able to hold ctx positions.
	NewState(ctx int) (State, error)
	// Forward runs a batch of steps: each appends its tokens to its state
	// and writes the logits the step asks for. The steps must use distinct
	// states. Tokens of all steps go through the matrix kernels together,
	// which is how prompt prefill and batched decoding reach matmul speed.
	Forward(steps []Step) error
	// Close releases the model's resources, including the file mapping.
	Close() error
}

// Step is the work for one sequence in a Forward call.
type Step struct {
	State  State
	Tokens []int
	// Embeds holds an input row of Info().Hidden floats for every
	// EmbedToken in Tokens, in order: image rows, which take the place of
	// a token's embedding.
	Embeds []float32
	// Pos, if set, holds the rotary position ids (t, h, w, e) of every
	// token, as models with multi-section M-RoPE place image rows; nil
	// continues the state's positions (see RopeCursor).
	Pos [][4]int
	// Logits receives n_vocab floats for the last token, or for every token
	// when All is set (len(Tokens)×n_vocab). Nil asks for no logits.
	Logits []float32
	All    bool
}

// State is the per-sequence memory of a model: its position and caches.
type State interface {
	// Pos is the number of tokens the state holds.
	Pos() int
	// Cap is the number of positions the state can hold.
	Cap() int
	// Reset empties the state for a new sequence.
	Reset()
	// Bytes reports the memory the state holds, by kind ("kv", "recurrent").
	Bytes() map[string]int64
	// Clone returns an independent copy (snapshot) of the state: restoring
	// is using the copy. Prefix caching and speculative decoding need it.
	Clone() State
	// Truncate drops every position from n on, keeping the first n, and
	// reports whether it could: attention caches can go back to any n ≤ Pos,
	// recurrent states only to Pos (nothing to drop) or 0 (Reset).
	Truncate(n int) bool
	// Grow makes room for n more positions (cache pages), so that a
	// Forward step of n tokens cannot run out of memory halfway. It fails
	// with an error wrapping kvcache.ErrFull past Cap and kvcache.ErrBudget
	// when the shared budget has no room. Forward calls it itself; a
	// scheduler calls it first to learn which steps fit.
	Grow(n int) error
}

// SyntheticFiller is a State whose attention caches can be filled to a
// depth with deterministic values without running the model, for
// benchmarks of attention at depths a small machine cannot prefill (the
// recurrent state, where there is one, stays as it is).
type SyntheticFiller interface {
	FillSynthetic(n int, seed uint64) error
}

// Info describes a loaded model.
type Info struct {
	Arch       string
	Name       string
	Vocab      int // logits per token
	Hidden     int
	Layers     int
	ContextLen int // the model's trained context
	// Recurrent is set when the state folds positions into a recurrent
	// state, so State.Truncate can only keep all positions or none.
	Recurrent bool
	// KVTokenBytes is what one position takes in the attention caches of
	// all layers, at the cache types the model was loaded with.
	KVTokenBytes int64
	Params       int64 // parameters in the file's tensors
	WeightBytes  int64 // bytes of tensor data
	// Types counts weight bytes per tensor format name.
	Types map[string]int64
	// Notes are facts about how the file was read (e.g. type-42 layout).
	Notes []string
}

// Options control loading.
type Options struct {
	// Threads for the kernel pool; <= 0 means every available core.
	Threads int
	// Pool, if set, is used instead of a new pool (Threads is then ignored).
	Pool *kernels.Pool
	// Exact runs every matrix product on exactly dequantized weights with
	// float activations: the slow reference path, for comparing a packed
	// file with its float original.
	Exact bool
	// CacheK and CacheV are the element types of attention caches
	// (kvcache.Types; nil means f16, as in llama.cpp).
	CacheK, CacheV *quant.Format
	// CacheNoRotate turns off the Hadamard rotation of quantized caches
	// (llama.cpp's LLAMA_ATTN_ROT_DISABLE).
	CacheNoRotate bool
	// KVBudget, if set, is the shared budget cache pages are drawn from.
	KVBudget *kvcache.Budget
}

// KVConfig returns the cache configuration the options ask for, for
// layers attention layers of the given shape.
func (o *Options) KVConfig(layers int, a *Attention) kvcache.Config {
	k, v := o.CacheK, o.CacheV
	if k == nil {
		k = quant.F16
	}
	if v == nil {
		v = quant.F16
	}
	return kvcache.Config{Layers: layers, KVHeads: a.KVHeads, HeadDim: a.HeadDim,
		K: k, V: v, Rotate: !o.CacheNoRotate, Budget: o.KVBudget}
}

// Loader builds a model of one architecture from an open source. On
// success the model owns src; on error the caller closes it.
type Loader func(src Source, opts Options) (Model, error)

var (
	mu      sync.RWMutex
	loaders = map[string]Loader{}
)

// Register makes an architecture available under a GGUF architecture name.
// It panics if the name is registered twice (a programming error).
func Register(arch string, l Loader) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := loaders[arch]; dup {
		panic("model: Register called twice for " + arch)
	}
	loaders[arch] = l
}

// Architectures lists the registered architecture names, sorted.
func Architectures() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(loaders))
	for n := range loaders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrUnknownArch is returned for a file whose architecture is not registered.
var ErrUnknownArch = errors.New("model: unknown architecture")

// Load opens a GGUF model file.
func Load(path string, opts Options) (Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := FromFile(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// FromFile builds a model from an open GGUF file, which the model then owns.
func FromFile(f *gguf.File, opts Options) (Model, error) {
	return FromSource(FromGGUF(f), opts)
}

// FromSource builds a model from an open source, which the model then owns
// (on error the caller closes it).
func FromSource(src Source, opts Options) (Model, error) {
	arch, ok := src.Meta().String("general.architecture")
	if !ok {
		return nil, fmt.Errorf("model: source has no general.architecture key")
	}
	mu.RLock()
	l := loaders[arch]
	mu.RUnlock()
	if l == nil {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownArch, arch, strings.Join(Architectures(), ", "))
	}
	return l(src, opts)
}

// WithPool runs build with the kernel pool opts asks for: opts.Pool, or a
// new pool of opts.Threads workers, closed again if build fails. owned
// reports whether the built model must close the pool itself.
func WithPool[M any](opts Options, build func(*kernels.Pool) (M, error)) (m M, owned bool, err error) {
	if opts.Pool != nil {
		m, err = build(opts.Pool)
		return m, false, err
	}
	pool := kernels.NewPool(opts.Threads)
	if m, err = build(pool); err != nil {
		pool.Close()
		return m, false, err
	}
	return m, true, nil
}
