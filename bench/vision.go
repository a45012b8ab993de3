package bench

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"trit/gguf"
	"trit/picture"
	"trit/quant"
	"trit/vision"
)

// VisionShape is the shape of a qwen3vl_merger image tower.
type VisionShape struct {
	Name                                    string
	Blocks, Hidden, Heads, FFN, Patch, Side int // Side: rows of the position table are Side²
	Out                                     int // text hidden size
}

// VisionShapes are the towers of the Bonsai 2 repositories (Qwen3.5's:
// 27 blocks of width 1152, 16 heads, patch 16, 2×2 merge, a 48×48
// position table), projecting to the 9B's and the 27B's hidden size.
var VisionShapes = []*VisionShape{
	{Name: "bonsai2-9b-vision", Blocks: 27, Hidden: 1152, Heads: 16, FFN: 4304, Patch: 16, Side: 48, Out: 4096},
	{Name: "bonsai2-27b-vision", Blocks: 27, Hidden: 1152, Heads: 16, FFN: 4304, Patch: 16, Side: 48, Out: 5120},
}

// VisionShapeByName returns the named shape, or nil.
func VisionShapeByName(name string) *VisionShape {
	for _, s := range VisionShapes {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// visionTensors lists the tower's tensors; matrices take RoleWeight.
func (s *VisionShape) visionTensors() []TensorSpec {
	c, p := int64(s.Hidden), int64(s.Patch)
	ts := []TensorSpec{
		{"v.patch_embd.weight", []int64{p, p, 3, c}, RoleWeight},
		{"v.patch_embd.weight.1", []int64{p, p, 3, c}, RoleWeight},
		{"v.patch_embd.bias", []int64{c}, RoleFloat},
		{"v.position_embd.weight", []int64{c, int64(s.Side * s.Side)}, RoleFloat},
	}
	for i := range s.Blocks {
		b := fmt.Sprintf("v.blk.%d.", i)
		ts = append(ts,
			TensorSpec{b + "ln1.weight", []int64{c}, RoleFloat}, TensorSpec{b + "ln1.bias", []int64{c}, RoleFloat},
			TensorSpec{b + "attn_qkv.weight", []int64{c, 3 * c}, RoleWeight}, TensorSpec{b + "attn_qkv.bias", []int64{3 * c}, RoleFloat},
			TensorSpec{b + "attn_out.weight", []int64{c, c}, RoleWeight}, TensorSpec{b + "attn_out.bias", []int64{c}, RoleFloat},
			TensorSpec{b + "ln2.weight", []int64{c}, RoleFloat}, TensorSpec{b + "ln2.bias", []int64{c}, RoleFloat},
			TensorSpec{b + "ffn_up.weight", []int64{c, int64(s.FFN)}, RoleWeight}, TensorSpec{b + "ffn_up.bias", []int64{int64(s.FFN)}, RoleFloat},
			TensorSpec{b + "ffn_down.weight", []int64{int64(s.FFN), c}, RoleWeight}, TensorSpec{b + "ffn_down.bias", []int64{c}, RoleFloat},
		)
	}
	return append(ts,
		TensorSpec{"v.post_ln.weight", []int64{c}, RoleFloat}, TensorSpec{"v.post_ln.bias", []int64{c}, RoleFloat},
		TensorSpec{"mm.0.weight", []int64{4 * c, 4 * c}, RoleWeight}, TensorSpec{"mm.0.bias", []int64{4 * c}, RoleFloat},
		TensorSpec{"mm.2.weight", []int64{4 * c, int64(s.Out)}, RoleWeight}, TensorSpec{"mm.2.bias", []int64{int64(s.Out)}, RoleFloat},
	)
}

// WriteVisionSyntheticFile writes an mmproj GGUF of shape s with random
// weights, its matrices in f. A matrix whose rows do not fill f's blocks
// (the patch kernel's 16 columns, ffn_down's 4304 for Q8_0) is F16, as
// llama.cpp's converter falls back for them.
func WriteVisionSyntheticFile(path string, s *VisionShape, f *quant.Format, seed uint64) error {
	w := gguf.NewWriter()
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	for _, kv := range []struct {
		k string
		v gguf.Value
	}{
		{"general.architecture", gguf.String("clip")},
		{"general.name", gguf.String(fmt.Sprintf("trit bench synthetic %s %s (random weights)", s.Name, f.Name))},
		{"clip.has_vision_encoder", gguf.Bool(true)},
		{"clip.projector_type", gguf.String(vision.ProjectorType)},
		{"clip.use_gelu", gguf.Bool(true)},
		{"clip.vision.projection_dim", u(s.Out)},
		{"clip.vision.image_size", u(s.Side * s.Patch)},
		{"clip.vision.patch_size", u(s.Patch)},
		{"clip.vision.embedding_length", u(s.Hidden)},
		{"clip.vision.feed_forward_length", u(s.FFN)},
		{"clip.vision.block_count", u(s.Blocks)},
		{"clip.vision.attention.head_count", u(s.Heads)},
		{"clip.vision.image_mean", gguf.Array([]float32{0.5, 0.5, 0.5})},
		{"clip.vision.image_std", gguf.Array([]float32{0.5, 0.5, 0.5})},
		{"clip.vision.spatial_merge_size", u(2)},
		{"clip.vision.attention.layer_norm_epsilon", gguf.Float32(1e-6)},
	} {
		if err := w.AddKV(kv.k, kv.v); err != nil {
			return err
		}
	}
	for i, ts := range s.visionTensors() {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		var write func(io.Writer) error
		format := quant.F32
		if ts.Role == RoleFloat {
			write = floatWriter(ts, rng)
		} else {
			format = f
			if _, err := f.RowBytes(ts.Dims[0]); err != nil {
				format = quant.F16
			}
			write = poolWriter(ts, format, rng, s.scaleFor(ts))
		}
		if err := w.AddTensorFunc(ts.Name, format, ts.Dims, write); err != nil {
			return err
		}
	}
	return w.WriteFile(path)
}

// scaleFor keeps activations near unit scale: weights of standard
// deviation 1/√fan-in.
func (s *VisionShape) scaleFor(ts TensorSpec) float32 {
	return float32(1 / math.Sqrt(float64(ts.Dims[0])))
}

// VisionResult is the timing of a tower encoding square images of Size
// pixels.
type VisionResult struct {
	Size, Tokens int
	Times        []time.Duration // one per repetition
	// GOP is the arithmetic of one encoding (multiply-adds count 2), and
	// MatrixGOP its part in the weight matrices.
	GOP, MatrixGOP float64
	// KernelTime is the time the same matrix products take alone in the
	// kernels (the prefill path's MatMul on the same shapes and rows; each
	// distinct shape timed once and counted as often as it occurs).
	KernelTime time.Duration
}

// Median is the median encoding time.
func (r *VisionResult) Median() time.Duration {
	t := slices.Clone(r.Times)
	slices.Sort(t)
	return t[len(t)/2]
}

// GOPS is the encoding's rate over all its arithmetic.
func (r *VisionResult) GOPS() float64 { return r.GOP / r.Median().Seconds() }

// KernelGOPS is the kernels' rate on the tower's matrix products.
func (r *VisionResult) KernelGOPS() float64 { return r.MatrixGOP / r.KernelTime.Seconds() }

// RunVision encodes a synthetic size×size image reps times after a
// warm-up, then times the encoding's matrix products alone.
func RunVision(t *vision.Tower, size, reps int) (*VisionResult, error) {
	img := &picture.RGB{W: size, H: size, Pix: make([]uint8, 3*size*size)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	// The budget that keeps the image at its size (up to the rounding to
	// whole merged patches).
	f := t.MergedPatch()
	n := (size / f) * (size / f)
	px, err := vision.Preprocess(img, f, t.Mean(), t.Std(), vision.Budget{MinTokens: min(n, vision.DefaultMinTokens), MaxTokens: max(n, 1)})
	if err != nil {
		return nil, err
	}
	r := &VisionResult{Size: size}
	for i := range reps + 1 {
		t0 := time.Now()
		e, err := t.Encode(px)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			r.Times = append(r.Times, time.Since(t0))
		}
		r.Tokens = e.N()
	}
	prods := t.Products(px.Image.W, px.Image.H)
	r.GOP = t.Ops(px.Image.W, px.Image.H) / 1e9
	var times []time.Duration
	for rep := range max(reps, 1) {
		var total time.Duration
		for _, p := range prods {
			if rep == 0 {
				r.MatrixGOP += float64(p.Count) * 2 * float64(p.Rows) * float64(p.M.In()) * float64(p.M.Out()) / 1e9
			}
			x := make([]float32, p.Rows*p.M.In())
			for i := range x {
				x[i] = rng.Float32() - 0.5
			}
			dst := make([]float32, p.Rows*p.M.Out())
			t0 := time.Now()
			p.M.Forward(dst, x, p.Rows)
			total += time.Duration(p.Count) * time.Since(t0)
		}
		times = append(times, total)
	}
	slices.Sort(times)
	r.KernelTime = times[len(times)/2]
	return r, nil
}
