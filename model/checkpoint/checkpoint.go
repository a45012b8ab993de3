// Package checkpoint opens Hugging Face checkpoint folders and MLX packs
// (config.json, safetensors weights, tokenizer.json) as model sources: it
// maps their tensor names and config keys onto the GGUF ones the
// architectures read, so a model runs from either container through the
// same code.
//
// MLX affine-quantized modules (.weight/.scales/.biases) that are exactly
// ternary (2-bit, bias = −scale, no code 3) or binary (1-bit, bias =
// −scale/2) become the matching GGUF layouts (PQ2_0, Q2_0_g64, Q1_0) in one
// repack that copies the code words unchanged next to their fp16 scales;
// other affine modules are dequantized to float32, a slower path. Tensors
// the text model does not use (a vision tower) are never read.
package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"trit/gguf"
	"trit/model"
	"trit/quant"
	"trit/safetensors"
)

// source is a checkpoint folder as a model.Source.
type source struct {
	set     *safetensors.Set
	meta    gguf.Metadata
	tensors []*model.Tensor
	byName  map[string]*model.Tensor
	layout  model.Layout
}

func (s *source) Meta() *gguf.Metadata             { return &s.meta }
func (s *source) Tensor(name string) *model.Tensor { return s.byName[name] }
func (s *source) Tensors() []*model.Tensor         { return s.tensors }
func (s *source) Layout() model.Layout             { return s.layout }
func (s *source) Close() error                     { return s.set.Close() }

// Open opens the checkpoint folder dir: config.json, the safetensors
// weights (model.safetensors or the shards of model.safetensors.index.json),
// and the tokenizer files when present.
func Open(dir string) (model.Source, error) {
	c, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	arch, err := archOf(c)
	if err != nil {
		return nil, err
	}
	q, err := parseQuant(c)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	s := &source{set: set, byName: map[string]*model.Tensor{}}
	if err := s.build(dir, c, arch, q); err != nil {
		set.Close()
		return nil, err
	}
	return s, nil
}

// family tells the name map which post-attention norm an arch has.
func family(arch string) string {
	if arch == "qwen35" {
		return "5"
	}
	return "3"
}

func (s *source) build(dir string, c config, arch string, q *quantConfig) error {
	fam := family(arch)
	// MLX packs store the zero-centred Qwen3.5 norms already as 1+w and
	// conv1d as [C, K, 1]; raw HF checkpoints as w and [C, 1, K]. MLX's
	// own loader tells them apart by the conv1d shape, and so does this.
	hfLayout := false
	for _, t := range s.set.Tensors {
		if strings.HasSuffix(t.Name, "linear_attn.conv1d.weight") && len(t.Shape) == 3 && t.Shape[1] == 1 && t.Shape[2] != 1 {
			hfLayout = true
		}
	}
	s.layout.Container = "Hugging Face checkpoint"
	if q != nil || (arch == "qwen35" && !hfLayout) {
		s.layout.Container = "MLX pack"
	}
	if arch == "qwen35" {
		switch l := c.str("gdn_activation_layout"); l {
		case "", "grouped":
			s.layout.GroupedVHeads = true
		case "tiled":
		default:
			return fmt.Errorf("%w: gdn_activation_layout %q", ErrConfig, l)
		}
	}
	shift := arch == "qwen35" && hfLayout

	for _, t := range s.set.Tensors {
		name := t.Name
		module, part, isQuant := quantPart(name)
		if isQuant {
			if part != "weight" {
				continue // read with their .weight
			}
			if s.set.Tensor(module+".scales") == nil {
				isQuant = false
			}
		}
		g, ok := ggufName(name, fam)
		if !ok {
			continue // vision tower, MTP head, rotary tables: not used
		}
		var mt *model.Tensor
		var err error
		if isQuant {
			if q == nil {
				return fmt.Errorf("%w: %s has scales but config.json has no quantization", ErrConfig, module)
			}
			mt, err = s.quantized(g, module, q.of(module))
		} else {
			mt, err = s.plain(g, t, shift)
		}
		if err != nil {
			return err
		}
		if s.byName[g] != nil {
			return fmt.Errorf("%w: two tensors map to %s", ErrConfig, g)
		}
		s.byName[g] = mt
		s.tensors = append(s.tensors, mt)
	}
	kvs, err := s.metadata(dir, c, arch)
	if err != nil {
		return err
	}
	s.meta, err = gguf.NewMetadata(kvs)
	return err
}

// quantPart splits "p.weight" / "p.scales" / "p.biases" into p and the part.
func quantPart(name string) (module, part string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", "", false
	}
	switch name[i+1:] {
	case "weight", "scales", "biases":
		return name[:i], name[i+1:], true
	}
	return "", "", false
}

// quantized maps an MLX module onto a GGUF tensor: a ternary or binary
// layout the kernels run on directly, else dequantized float32.
func (s *source) quantized(g, module string, spec quantSpec) (*model.Tensor, error) {
	w, sc, b := s.set.Tensor(module+".weight"), s.set.Tensor(module+".scales"), s.set.Tensor(module+".biases")
	if b == nil {
		return nil, fmt.Errorf("%w: %s has scales but no biases", ErrConfig, module)
	}
	a, err := newAffine(module, spec, w, sc, b)
	if err != nil {
		return nil, err
	}
	dims := []int64{int64(a.cols), int64(a.rows)}
	f, err := a.ternary()
	if err != nil {
		return nil, err
	}
	if f != nil {
		size := int64(a.rows) * int64(a.cols/f.BlockElems) * int64(f.BlockBytes)
		t := model.NewTensor(g, dims, f, size, lazy(func() ([]byte, error) { return a.repack(f) }))
		t.Note = fmt.Sprintf("MLX %d-bit ternary modules repacked to %s", spec.Bits, f.Name)
		return t, nil
	}
	t := model.NewTensor(g, dims, quant.F32, int64(a.rows)*int64(a.cols)*4, lazy(a.dequantize))
	t.Note = fmt.Sprintf("MLX affine %d-bit modules dequantized to F32 (slow path)", spec.Bits)
	return t, nil
}

// plain maps an unquantized tensor: float dtypes zero-copy, with the
// value transforms llama.cpp's converter applies (ssm_a = −exp(A_log),
// 1+w norms of raw HF Qwen3.5) computed into float32.
func (s *source) plain(g string, t *safetensors.Tensor, shift bool) (*model.Tensor, error) {
	if !t.DType.Float() {
		return nil, fmt.Errorf("%w: %s is %s, not a float type", ErrUnsupported, t.Name, t.DType)
	}
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		dims[len(dims)-1-i] = d
	}
	if strings.HasSuffix(g, "ssm_conv1d.weight") {
		if len(t.Shape) != 3 || (t.Shape[1] != 1 && t.Shape[2] != 1) {
			return nil, fmt.Errorf("%w: %s has shape %v, want [C, 1, K] or [C, K, 1]", ErrConfig, t.Name, t.Shape)
		}
		k := t.Shape[1] * t.Shape[2]
		dims = []int64{k, t.Shape[0]} // both layouts hold channel c's taps at c·K
	}
	var transform func(float32) float32
	switch {
	case strings.HasSuffix(g, ".ssm_a") && t.DType == safetensors.F64:
		return model.NewTensor(g, dims, quant.F32, 4*t.Elems(), lazy(func() ([]byte, error) {
			data, err := t.Data()
			if err != nil {
				return nil, err
			}
			out := make([]byte, 4*t.Elems())
			for i := range t.Elems() {
				a := SSMA64(math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])))
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(a))
			}
			return out, nil
		})), nil
	case strings.HasSuffix(g, ".ssm_a"):
		transform = SSMA
	case shift && strings.HasSuffix(g, "norm.weight") && !strings.HasSuffix(g, "ssm_norm.weight"):
		transform = func(w float32) float32 { return w + 1 }
	}
	f := map[safetensors.DType]*quant.Format{safetensors.F32: quant.F32, safetensors.F16: quant.F16, safetensors.BF16: quant.BF16}[t.DType]
	if transform == nil && f != nil {
		return model.NewTensor(g, dims, f, t.Size(), t.Data), nil
	}
	n := t.Elems()
	return model.NewTensor(g, dims, quant.F32, 4*n, lazy(func() ([]byte, error) {
		v, err := t.Floats()
		if err != nil {
			return nil, err
		}
		out := make([]byte, 4*len(v))
		for i, x := range v {
			if transform != nil {
				x = transform(x)
			}
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out, nil
	})), nil
}

// SSMA is GGUF's ssm_a of a checkpoint's A_log: −exp(A_log).
func SSMA(aLog float32) float32 { return SSMA64(float64(aLog)) }

// SSMA64 is SSMA of an A_log stored in float64 (converters write F64 when
// no float32 A_log maps back to the GGUF value exactly).
func SSMA64(aLog float64) float32 { return float32(-math.Exp(aLog)) }

// ALog inverts SSMA: the float32 A_log whose SSMA is exactly a, searched
// around log(−a) because exp and log do not round-trip in float32. It
// reports false when no float32 maps back to a (or a is not negative).
func ALog(a float32) (float32, bool) {
	if !(a < 0) || math.IsInf(float64(a), 0) {
		return 0, false
	}
	x := float32(math.Log(-float64(a)))
	if SSMA(x) == a {
		return x, true
	}
	up, down := x, x
	for range 16 {
		up = math.Nextafter32(up, float32(math.Inf(1)))
		down = math.Nextafter32(down, float32(math.Inf(-1)))
		if SSMA(up) == a {
			return up, true
		}
		if SSMA(down) == a {
			return down, true
		}
	}
	return x, false
}
