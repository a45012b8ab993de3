package model

import (
	"fmt"

	"trit/kernels"
)

// Weights gives an architecture typed access to a source's tensors and
// hyperparameters, with shape checks and errors that name the tensor.
type Weights struct {
	Src   Source
	Arch  string // prefix of the hyperparameter keys
	Pool  *kernels.Pool
	Exact bool
}

// Linear is a weight matrix applied to rows of activations.
type Linear struct {
	M     *kernels.Matrix
	pool  *kernels.Pool
	exact bool
}

// In is the input width (GGUF ne[0]).
func (l *Linear) In() int { return l.M.Cols }

// Out is the output width.
func (l *Linear) Out() int { return l.M.Rows }

// Forward computes dst[i*Out+r] = Σ_k W[r,k]·x[i*In+k] for n rows of x.
func (l *Linear) Forward(dst, x []float32, n int) {
	if l.exact {
		l.pool.MatMulFloat(dst[:n*l.M.Rows], l.M, x[:n*l.M.Cols], n)
		return
	}
	l.pool.MatMul(dst[:n*l.M.Rows], l.M, x[:n*l.M.Cols], n)
}

// ForwardActs is Forward for activations already quantized into a by
// Pool.Quantize, so that matrices reading the same input (q, k and v; gate
// and up) quantize it once. x must hold the same n rows a was made from:
// the exact path reads it instead.
func (l *Linear) ForwardActs(dst, x []float32, a *kernels.Acts, n int) {
	if l.exact {
		l.pool.MatMulFloat(dst[:n*l.M.Rows], l.M, x[:n*l.M.Cols], n)
		return
	}
	l.pool.MatMulActs(dst[:n*l.M.Rows], l.M, a)
}

// ErrShape is wrapped by errors about a tensor with unexpected dimensions.
var ErrShape = fmt.Errorf("model: tensor shape")

// Has reports whether the source holds the tensor.
func (w *Weights) Has(name string) bool {
	return w.Src.Tensor(name) != nil
}

// Tensor returns the named tensor, or nil.
func (w *Weights) Tensor(name string) *Tensor { return w.Src.Tensor(name) }

func (w *Weights) tensor(name string, dims ...int) (*Tensor, error) {
	t := w.Src.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("model: %s: missing tensor %s", w.Arch, name)
	}
	if len(t.Dims) != len(dims) {
		return nil, fmt.Errorf("%w: %s has dims %v, want %v", ErrShape, name, t.Dims, dims)
	}
	for i, d := range dims {
		if d >= 0 && t.Dims[i] != int64(d) {
			return nil, fmt.Errorf("%w: %s has dims %v, want %v", ErrShape, name, t.Dims, dims)
		}
	}
	return t, nil
}

// Linear returns the matrix `name` mapping in inputs to out outputs (GGUF
// dims [in, out]); a negative width is taken from the file.
func (w *Weights) Linear(name string, in, out int) (*Linear, error) {
	t, err := w.tensor(name, in, out)
	if err != nil {
		return nil, err
	}
	data, err := t.Data()
	if err != nil {
		return nil, err
	}
	m := &kernels.Matrix{Format: t.Format, Rows: int(t.Dims[1]), Cols: int(t.Dims[0]), Data: data}
	return &Linear{M: m, pool: w.Pool, exact: w.Exact}, nil
}

// Vector returns a 1-D tensor of n elements decoded to float32 (norm
// weights, biases: small tensors, decoded once at load).
func (w *Weights) Vector(name string, n int) ([]float32, error) {
	t, err := w.tensor(name, n)
	if err != nil {
		return nil, err
	}
	return t.Floats()
}

// Tensor2 returns a small 2-D tensor [d0, d1] decoded to float32 in file
// order (d0 fastest).
func (w *Weights) Tensor2(name string, d0, d1 int) ([]float32, error) {
	t, err := w.tensor(name, d0, d1)
	if err != nil {
		return nil, err
	}
	return t.Floats()
}

// Uint returns the hyperparameter <arch>.key, or def when absent.
func (w *Weights) Uint(key string, def int) int {
	if v, ok := w.Src.Meta().Uint(w.Arch + "." + key); ok {
		return int(v)
	}
	return def
}

// MustUint returns the hyperparameter <arch>.key or an error naming it.
func (w *Weights) MustUint(key string) (int, error) {
	v, ok := w.Src.Meta().Uint(w.Arch + "." + key)
	if !ok {
		return 0, fmt.Errorf("model: %s: missing hyperparameter %s.%s", w.Arch, w.Arch, key)
	}
	if v > 1<<31 {
		return 0, fmt.Errorf("model: %s.%s = %d is out of range", w.Arch, key, v)
	}
	return int(v), nil
}

// Float returns the hyperparameter <arch>.key, or def when absent.
func (w *Weights) Float(key string, def float64) float64 {
	if v, ok := w.Src.Meta().Float(w.Arch + "." + key); ok {
		return v
	}
	return def
}

// String returns the hyperparameter <arch>.key, or def when absent.
func (w *Weights) String(key, def string) string {
	if v, ok := w.Src.Meta().String(w.Arch + "." + key); ok {
		return v
	}
	return def
}

// Summary fills the size fields of info from the source's tensors.
func (w *Weights) Summary(info *Info) {
	info.Types = map[string]int64{}
	for _, t := range w.Src.Tensors() {
		info.Params += t.Elems()
		info.WeightBytes += t.Size
		info.Types[t.Format.Name] += t.Size
	}
	info.Name, _ = w.Src.Meta().String("general.name")
	seen := map[string]bool{}
	for _, t := range w.Src.Tensors() {
		if t.Note != "" && !seen[t.Note] {
			seen[t.Note] = true
			info.Notes = append(info.Notes, t.Note)
		}
	}
	if c := w.Src.Layout().Container; c != "" && c != "GGUF" {
		info.Notes = append(info.Notes, "loaded from "+c)
	}
}
