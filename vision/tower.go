// Package vision runs the image tower of Qwen3.5-family vision-language
// models: the `mmproj` GGUF of projector type qwen3vl_merger that llama.cpp
// reads. An image is resized and normalised (Preprocess), cut into 16×16
// patches, run through a ViT with 2D rotary positions, and every 2×2 block
// of patches merged into one embedding row of the text model's width,
// which the text model takes in place of a token's embedding.
//
// The arithmetic follows llama.cpp's libmtmd (CPU backend), including the
// places where it rounds to fp16: the patch-embedding inputs and the GELU
// table. Matrix weights stay in the file's memory map and go through the
// packed kernels; F32, F16, BF16 and Q8_0 towers work alike.
package vision

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"trit/gguf"
	"trit/half"
	"trit/kernels"
	"trit/model"
)

// ProjectorType is the clip.projector_type this package implements.
const ProjectorType = "qwen3vl_merger"

// ErrUnsupported is wrapped by errors about an mmproj file this package
// cannot run.
var ErrUnsupported = errors.New("vision: unsupported mmproj")

// ropeBase is the vision RoPE base, hard-coded in llama.cpp (qwen3vl.cpp).
const ropeBase = 10000

type block struct {
	ln1W, ln1B, ln2W, ln2B []float32
	qkv, out, up, down     *model.Linear
	qkvB, outB, upB, downB []float32
}

// Tower is a loaded vision tower. Encode is not safe for concurrent use.
type Tower struct {
	file    *gguf.File
	pool    *kernels.Pool
	ownPool bool

	hidden, heads, ffn, patch, merge, side, outDim int
	eps                                            float32
	mean, std                                      [3]float32

	patchW []float32 // [3·patch²][hidden]: both temporal halves, fp16-rounded, summed
	patchB []float32
	pos    []float32 // [side²][hidden], row y·side + x
	blocks []block
	postW  []float32
	postB  []float32
	mm0    *model.Linear
	mm2    *model.Linear
	mm0B   []float32
	mm2B   []float32

	weightBytes int64
}

// Options control loading.
type Options struct {
	Threads int           // kernel pool size when Pool is nil; <= 0 means every core
	Pool    *kernels.Pool // shared pool, e.g. the text model's
}

// Load opens an mmproj GGUF file.
func Load(path string, opts Options) (*Tower, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	t, err := FromFile(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// maxDim bounds every hyperparameter that sizes a buffer before the tensor
// shapes (which must match the file's data) are checked.
const maxDim = 1 << 16

// FromFile builds a tower from an open GGUF file, which it then owns.
func FromFile(f *gguf.File, opts Options) (*Tower, error) {
	t, own, err := model.WithPool(model.Options{Threads: opts.Threads, Pool: opts.Pool}, func(pool *kernels.Pool) (*Tower, error) { return build(f, pool) })
	if err != nil {
		return nil, err
	}
	t.ownPool = own
	return t, nil
}

func build(f *gguf.File, pool *kernels.Pool) (*Tower, error) {
	if typ, _ := f.String("clip.projector_type"); typ != ProjectorType {
		return nil, fmt.Errorf("%w: clip.projector_type %q (trit runs %s)", ErrUnsupported, typ, ProjectorType)
	}
	if v, ok := f.Bool("clip.has_vision_encoder"); ok && !v {
		return nil, fmt.Errorf("%w: the file has no vision encoder", ErrUnsupported)
	}
	w := &model.Weights{Src: model.FromGGUF(f), Arch: "clip", Pool: pool}
	t := &Tower{file: f, pool: pool}
	var err error
	get := func(key string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = w.MustUint(key)
		if err == nil && (v <= 0 || v > maxDim) {
			err = fmt.Errorf("vision: clip.%s = %d is out of range", key, v)
		}
		return v
	}
	t.hidden = get("vision.embedding_length")
	t.heads = get("vision.attention.head_count")
	t.ffn = get("vision.feed_forward_length")
	t.patch = get("vision.patch_size")
	nBlocks := get("vision.block_count")
	t.outDim = get("vision.projection_dim")
	if err != nil {
		return nil, err
	}
	t.merge = w.Uint("vision.spatial_merge_size", 2)
	t.eps = float32(w.Float("vision.attention.layer_norm_epsilon", 1e-6))
	switch {
	case t.merge != 2:
		// llama.cpp's graph hard-codes the 2×2 merge whatever the key says;
		// refuse rather than disagree with the file.
		return nil, fmt.Errorf("%w: spatial merge %d (only 2 is implemented)", ErrUnsupported, t.merge)
	case t.hidden%t.heads != 0 || (t.hidden/t.heads)%4 != 0:
		return nil, fmt.Errorf("%w: hidden %d over %d heads does not give a head dim divisible by 4", ErrUnsupported, t.hidden, t.heads)
	case t.patch > 64:
		return nil, fmt.Errorf("%w: patch size %d", ErrUnsupported, t.patch)
	case nBlocks > 256:
		return nil, fmt.Errorf("%w: %d blocks", ErrUnsupported, nBlocks)
	}
	if gelu, ok := f.Bool("clip.use_gelu"); ok && !gelu {
		return nil, fmt.Errorf("%w: clip.use_gelu false: a SiLU tower (trit runs the GELU towers of Qwen3.5)", ErrUnsupported)
	}
	if ds, ok := f.Lookup("clip.vision.is_deepstack_layers"); ok {
		for i := range ds.Len() {
			if b, _ := ds.Index(i).Bool(); b {
				return nil, fmt.Errorf("%w: deepstack layers: a Qwen3-VL tower (trit runs the Qwen3.5 towers, which have none)", ErrUnsupported)
			}
		}
	}
	for key, dst := range map[string]*[3]float32{"clip.vision.image_mean": &t.mean, "clip.vision.image_std": &t.std} {
		v, ok := f.Floats(key)
		if !ok || len(v) != 3 {
			return nil, fmt.Errorf("vision: %s must hold 3 numbers", key)
		}
		for i := range 3 {
			dst[i] = float32(v[i])
		}
		if key == "clip.vision.image_std" && (t.std[0] <= 0 || t.std[1] <= 0 || t.std[2] <= 0) {
			return nil, fmt.Errorf("vision: image_std %v", t.std)
		}
	}

	C, p := t.hidden, t.patch
	ld := &loader{w: w}
	k0 := ld.tensor("v.patch_embd.weight", p, p, 3, C)
	k1 := ld.tensor("v.patch_embd.weight.1", p, p, 3, C)
	t.patchB = ld.vec("v.patch_embd.bias", C)
	posT := ld.w.Src.Tensor("v.position_embd.weight")
	if ld.err == nil && (posT == nil || len(posT.Dims) != 2 || posT.Dims[1] <= 0 || posT.Dims[1] > maxDim) {
		ld.err = fmt.Errorf("vision: missing or misshapen v.position_embd.weight")
	}
	if ld.err == nil {
		rows := int(posT.Dims[1])
		t.side = int(math.Sqrt(float64(rows)))
		if t.side*t.side != rows {
			ld.err = fmt.Errorf("vision: position table of %d rows is not square", rows)
		} else {
			t.pos = ld.tensor("v.position_embd.weight", C, rows)
		}
	}
	for i := range nBlocks {
		pre := fmt.Sprintf("v.blk.%d.", i)
		t.blocks = append(t.blocks, block{
			ln1W: ld.vec(pre+"ln1.weight", C), ln1B: ld.vec(pre+"ln1.bias", C),
			ln2W: ld.vec(pre+"ln2.weight", C), ln2B: ld.vec(pre+"ln2.bias", C),
			qkv: ld.linear(pre+"attn_qkv.weight", C, 3*C), qkvB: ld.vec(pre+"attn_qkv.bias", 3*C),
			out: ld.linear(pre+"attn_out.weight", C, C), outB: ld.vec(pre+"attn_out.bias", C),
			up: ld.linear(pre+"ffn_up.weight", C, t.ffn), upB: ld.vec(pre+"ffn_up.bias", t.ffn),
			down: ld.linear(pre+"ffn_down.weight", t.ffn, C), downB: ld.vec(pre+"ffn_down.bias", C),
		})
	}
	t.postW, t.postB = ld.vec("v.post_ln.weight", C), ld.vec("v.post_ln.bias", C)
	t.mm0, t.mm0B = ld.linear("mm.0.weight", 4*C, 4*C), ld.vec("mm.0.bias", 4*C)
	t.mm2, t.mm2B = ld.linear("mm.2.weight", 4*C, t.outDim), ld.vec("mm.2.bias", t.outDim)
	if ld.err == nil && f.Tensor("v.deepstack.0.fc1.weight") != nil {
		ld.err = fmt.Errorf("%w: deepstack tensors: a Qwen3-VL tower (trit runs the Qwen3.5 towers, which have none)", ErrUnsupported)
	}
	if ld.err != nil {
		return nil, ld.err
	}
	// ggml's conv2d makes its im2col in fp16, so the kernel values are
	// rounded to fp16 before the products; the two temporal halves see the
	// same frame of a still image, so their rounded sum is one kernel.
	K := 3 * p * p
	t.patchW = make([]float32, K*C)
	for o := range C {
		for k := range K {
			t.patchW[k*C+o] = round16(k0[o*K+k]) + round16(k1[o*K+k])
		}
	}
	for _, tn := range f.Tensors {
		t.weightBytes += tn.Size
	}
	return t, nil
}

// loader reads tensors and remembers the first error.
type loader struct {
	w   *model.Weights
	err error
}

func (l *loader) vec(name string, n int) []float32 {
	if l.err != nil {
		return nil
	}
	v, err := l.w.Vector(name, n)
	l.err = err
	return v
}

func (l *loader) linear(name string, in, out int) *model.Linear {
	if l.err != nil {
		return nil
	}
	m, err := l.w.Linear(name, in, out)
	l.err = err
	return m
}

// tensor decodes a small tensor of the given dims to float32.
func (l *loader) tensor(name string, dims ...int) []float32 {
	if l.err != nil {
		return nil
	}
	tn := l.w.Src.Tensor(name)
	if tn == nil {
		l.err = fmt.Errorf("vision: missing tensor %s", name)
		return nil
	}
	ok := len(tn.Dims) == len(dims)
	for i := range dims {
		ok = ok && tn.Dims[i] == int64(dims[i])
	}
	if !ok {
		l.err = fmt.Errorf("%w: %s has dims %v, want %v", model.ErrShape, name, tn.Dims, dims)
		return nil
	}
	data, err := tn.Data()
	if err != nil {
		l.err = fmt.Errorf("vision: %s: %w", name, err)
		return nil
	}
	out := make([]float32, tn.Elems())
	if err := tn.Format.Decode(out, data); err != nil {
		l.err = fmt.Errorf("vision: %s: %w", name, err)
		return nil
	}
	return out
}

// Close releases the file mapping (and the pool, if the tower made it).
func (t *Tower) Close() error {
	if t.ownPool {
		t.pool.Close()
	}
	return t.file.Close()
}

// OutDim is the width of an embedding row: the text model's hidden size.
func (t *Tower) OutDim() int { return t.outDim }

// MergedPatch is the side in pixels of the square one embedding row covers.
func (t *Tower) MergedPatch() int { return t.patch * t.merge }

// Mean and Std are the per-channel normalisation of the tower's inputs.
func (t *Tower) Mean() [3]float32 { return t.mean }

// Std is the per-channel standard deviation of the inputs.
func (t *Tower) Std() [3]float32 { return t.std }

// WeightBytes is the size of the file's tensor data.
func (t *Tower) WeightBytes() int64 { return t.weightBytes }

// Embeddings are the rows an image turns into, row-major over the merged
// patch grid.
type Embeddings struct {
	GridX, GridY int // merged columns and rows
	Dim          int
	Data         []float32 // GridX·GridY rows of Dim
}

// N is the number of rows.
func (e *Embeddings) N() int { return e.GridX * e.GridY }

// Row returns row i.
func (e *Embeddings) Row(i int) []float32 { return e.Data[i*e.Dim : (i+1)*e.Dim] }

// round16 rounds x to fp16 and back.
func round16(x float32) float32 { return half.ToFloat32(half.FromFloat32(x)) }

// geluTable holds ggml's fp16 GELU table: entry h is the tanh-form GELU of
// the fp16 value with bits h, rounded to fp16.
var geluTable = sync.OnceValue(func() []float32 {
	tab := make([]float32, 1<<16)
	const c = 0.7978845608028654 // √(2/π)
	for i := range tab {
		x := half.ToFloat32(uint16(i))
		in := float32(c) * x * (1 + 0.044715*x*x)
		tab[i] = round16(0.5 * x * (1 + float32(math.Tanh(float64(in)))))
	}
	return tab
})

// gelu applies GELU in place as ggml's CPU backend does: from the fp16
// table inside (−10, 10), the identity above, 0 below.
func gelu(x []float32) {
	tab := geluTable()
	for i, v := range x {
		switch {
		case v <= -10:
			x[i] = 0
		case v >= 10:
		default:
			x[i] = tab[half.FromFloat32(v)]
		}
	}
}

// Product is one kind of matrix product in an encoding: Count products of
// Rows activation rows by M.
type Product struct {
	Name        string
	M           *model.Linear
	Rows, Count int
}

// Products lists the matrix products of encoding a w×h image (already
// preprocessed to a multiple of MergedPatch), one entry per distinct shape.
func (t *Tower) Products(w, h int) []Product {
	np := (w / t.patch) * (h / t.patch)
	if len(t.blocks) == 0 {
		return nil
	}
	b, n := &t.blocks[0], len(t.blocks)
	return []Product{
		{"attn_qkv", b.qkv, np, n}, {"attn_out", b.out, np, n},
		{"ffn_up", b.up, np, n}, {"ffn_down", b.down, np, n},
		{"mm.0", t.mm0, np / 4, 1}, {"mm.2", t.mm2, np / 4, 1},
	}
}

// Ops is the arithmetic of encoding a w×h image, multiply-adds counted
// as 2: the matrix products, attention (q·kᵀ and the weighted sum of v)
// and the patch embedding.
func (t *Tower) Ops(w, h int) float64 {
	np := float64((w / t.patch) * (h / t.patch))
	var ops float64
	for _, p := range t.Products(w, h) {
		ops += float64(p.Count) * 2 * float64(p.Rows) * float64(p.M.In()) * float64(p.M.Out())
	}
	ops += float64(len(t.blocks)) * 2 * 2 * np * np * float64(t.hidden)
	ops += 2 * np * float64(3*t.patch*t.patch) * float64(t.hidden)
	return ops
}
