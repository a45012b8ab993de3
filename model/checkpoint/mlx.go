package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"trit/half"
	"trit/quant"
	"trit/safetensors"
)

// quantSpec is an MLX quantization {group_size, bits, mode}.
type quantSpec struct {
	Group int    `json:"group_size"`
	Bits  int    `json:"bits"`
	Mode  string `json:"mode"`
}

// quantConfig is config.json's "quantization": defaults and per-module
// overrides keyed by module path.
type quantConfig struct {
	def       quantSpec
	overrides map[string]quantSpec
}

func parseQuant(c config) (*quantConfig, error) {
	raw, ok := c["quantization"].(map[string]any)
	if !ok {
		raw, ok = c["quantization_config"].(map[string]any)
	}
	if !ok {
		return nil, nil
	}
	spec := func(m map[string]any, def quantSpec) (quantSpec, error) {
		s := def
		if v, ok := m["group_size"].(float64); ok {
			s.Group = int(v)
		}
		if v, ok := m["bits"].(float64); ok {
			s.Bits = int(v)
		}
		if v, ok := m["mode"].(string); ok {
			s.Mode = v
		}
		if s.Mode != "affine" {
			return s, fmt.Errorf("%w: MLX quantization mode %q (only affine)", ErrUnsupported, s.Mode)
		}
		switch s.Bits {
		case 1, 2, 4, 8:
		default:
			return s, fmt.Errorf("%w: MLX %d-bit quantization (trit reads 1, 2, 4 and 8 bits)", ErrUnsupported, s.Bits)
		}
		if s.Group <= 0 || s.Group%32 != 0 || s.Group > 1<<16 {
			return s, fmt.Errorf("%w: MLX group size %d", ErrConfig, s.Group)
		}
		return s, nil
	}
	q := &quantConfig{overrides: map[string]quantSpec{}}
	var err error
	if q.def, err = spec(raw, quantSpec{Group: 64, Bits: 4, Mode: "affine"}); err != nil {
		return nil, err
	}
	for k, v := range raw {
		if m, ok := v.(map[string]any); ok {
			if q.overrides[k], err = spec(m, q.def); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return q, nil
}

func (q *quantConfig) of(module string) quantSpec {
	if s, ok := q.overrides[module]; ok {
		return s
	}
	return q.def
}

// affine is one MLX quantized module: its packed words and per-group
// scales and biases.
type affine struct {
	name                   string
	spec                   quantSpec
	rows, cols             int
	weight, scales, biases *safetensors.Tensor
}

// newAffine checks the shapes of a .weight/.scales/.biases triplet.
func newAffine(name string, spec quantSpec, w, s, b *safetensors.Tensor) (*affine, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrConfig, name}, args...)...)
	}
	if w.DType != safetensors.U32 || len(w.Shape) != 2 {
		return nil, bad("MLX weight is %s %v, want U32 [rows, words]", w.DType, w.Shape)
	}
	rows, words := w.Shape[0], w.Shape[1]
	cols := words * 32 / int64(spec.Bits)
	if rows <= 0 || cols <= 0 || cols%int64(spec.Group) != 0 || cols > 1<<24 {
		return nil, bad("%d×%d elements in groups of %d", rows, cols, spec.Group)
	}
	groups := cols / int64(spec.Group)
	for _, t := range []*safetensors.Tensor{s, b} {
		if !t.DType.Float() || len(t.Shape) != 2 || t.Shape[0] != rows || t.Shape[1] != groups {
			return nil, bad("%s is %s %v, want a float [%d, %d]", t.Name, t.DType, t.Shape, rows, groups)
		}
	}
	return &affine{name: name, spec: spec, rows: int(rows), cols: int(cols), weight: w, scales: s, biases: b}, nil
}

// floats decodes the scales and biases.
func (a *affine) floats() (s, b []float32, err error) {
	if s, err = a.scales.Floats(); err != nil {
		return nil, nil, err
	}
	if b, err = a.biases.Floats(); err != nil {
		return nil, nil, err
	}
	return s, b, nil
}

// ternary reports the GGUF layout the module's words can be used in as
// they are: 2-bit codes with bias = −scale in every group and no code 3
// are the Q2_0 code bytes (w = (q−1)·s); 1-bit with bias = −scale/2 is
// Q1_0 (w = ±s/2). Scales must be finite and exact in fp16. It returns nil
// when the module needs the generic affine path.
func (a *affine) ternary() (*quant.Format, error) {
	var f *quant.Format
	switch {
	case a.spec.Bits == 2 && a.spec.Group == 128:
		f = quant.PQ2_0
	case a.spec.Bits == 2 && a.spec.Group == 64:
		f = quant.Q2_0g64
	case a.spec.Bits == 1 && a.spec.Group == 128:
		f = quant.Q1_0
	default:
		return nil, nil
	}
	var ok bool
	var err error
	if a.spec.Bits == 2 && a.scales.DType == safetensors.F16 && a.biases.DType == safetensors.F16 {
		ok, err = a.halfNegated()
	} else {
		ok, err = a.floatNegated()
	}
	if err != nil || !ok {
		return nil, err
	}
	if a.spec.Bits == 2 {
		if ok, err = a.noCode3(); err != nil || !ok {
			return nil, err
		}
	}
	return f, nil
}

// floatNegated reports whether every group's bias is −d, d (the scale, or
// half of it at 1 bit) finite and exact in fp16.
func (a *affine) floatNegated() (bool, error) {
	s, b, err := a.floats()
	if err != nil {
		return false, err
	}
	for i := range s {
		d := s[i]
		if a.spec.Bits == 1 {
			d = s[i] / 2
		}
		if b[i] != -d || !exactHalf(d) {
			return false, nil
		}
	}
	return true, nil
}

// noCode3 reports whether no 2-bit code is 3 (both bits of a pair set),
// eight bytes at a time (the words are whole groups: len%8 == 0).
func (a *affine) noCode3() (bool, error) {
	w, err := a.weight.Data()
	if err != nil {
		return false, err
	}
	for i := 0; i < len(w); i += 8 {
		x := binary.LittleEndian.Uint64(w[i:])
		if x&(x>>1)&0x5555555555555555 != 0 {
			return false, nil
		}
	}
	return true, nil
}

// halfNegated is floatNegated for fp16 scales and biases at 2 bits, on
// the bits: each bias is its finite scale with the sign flipped.
func (a *affine) halfNegated() (bool, error) {
	s, err := a.scales.Data()
	if err != nil {
		return false, err
	}
	b, err := a.biases.Data()
	if err != nil {
		return false, err
	}
	for i := 0; i < len(s); i += 2 {
		sv := uint16(s[i]) | uint16(s[i+1])<<8
		if uint16(b[i])|uint16(b[i+1])<<8 != sv^0x8000 || sv&0x7c00 == 0x7c00 {
			return false, nil
		}
	}
	return true, nil
}

// exactHalf reports whether v is finite and survives fp16 exactly.
func exactHalf(v float32) bool {
	if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
		return false
	}
	return half.ToFloat32(half.FromFloat32(v)) == v
}

// repack builds the GGUF blocks of a ternary module: per group the fp16
// scale d, then the group's code bytes, which are the MLX words as stored.
func (a *affine) repack(f *quant.Format) ([]byte, error) {
	w, err := a.weight.Data()
	if err != nil {
		return nil, err
	}
	code := f.BlockBytes - 2
	groups := int(a.scales.Elems())
	out := make([]byte, groups*f.BlockBytes)
	if a.spec.Bits == 2 && a.scales.DType == safetensors.F16 {
		// The fp16 scales are the block scales bit for bit.
		raw, err := a.scales.Data()
		if err != nil {
			return nil, err
		}
		for g := range groups {
			blk := out[g*f.BlockBytes : (g+1)*f.BlockBytes]
			blk[0], blk[1] = raw[2*g], raw[2*g+1]
			copy(blk[2:], w[g*code:(g+1)*code])
		}
		return out, nil
	}
	s, _, err := a.floats()
	if err != nil {
		return nil, err
	}
	for g := range s {
		d := s[g]
		if a.spec.Bits == 1 {
			d /= 2
		}
		blk := out[g*f.BlockBytes : (g+1)*f.BlockBytes]
		binary.LittleEndian.PutUint16(blk, half.FromFloat32(d))
		copy(blk[2:], w[g*code:(g+1)*code])
	}
	return out, nil
}

// dequantize computes w = s·q + b in float32 for every element, as MLX's
// fallback does: the slow path for modules that are not ternary.
func (a *affine) dequantize() ([]byte, error) {
	w, err := a.weight.Data()
	if err != nil {
		return nil, err
	}
	s, b, err := a.floats()
	if err != nil {
		return nil, err
	}
	bits := a.spec.Bits
	mask := uint32(1)<<bits - 1
	per := 32 / bits
	out := make([]byte, a.rows*a.cols*4)
	for i := range a.rows * a.cols {
		word := binary.LittleEndian.Uint32(w[4*(i/per):])
		q := float32(word >> (bits * (i % per)) & mask)
		g := i / a.spec.Group
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(s[g]*q+b[g]))
	}
	return out, nil
}

// lazy caches the bytes a build function makes on first use.
func lazy(build func() ([]byte, error)) func() ([]byte, error) {
	var once sync.Once
	var data []byte
	var err error
	return func() ([]byte, error) {
		once.Do(func() { data, err = build() })
		return data, err
	}
}
