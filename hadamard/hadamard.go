// Package hadamard describes and applies the Hadamard rotations of
// rotation-folded ternary models (Ternary Bonsai 2).
//
// Such a model stores some weight matrices as W′ = W·Rᵀ, where
// R = blockdiag(H_B)·diag(s) is a blockwise normalised Walsh–Hadamard
// transform preceded by a ±1 sign vector s chosen per input width. A runtime
// recovers W·x as W′·(R·x): it rotates the activations feeding every folded
// weight (Forward), and undoes the rotation on rows of a table stored as R·e,
// such as the token embedding (Inverse).
//
// A Declaration holds the rotation a model file declares; it is independent
// of the container, so GGUF metadata (Parse, from the `prism.hadamard.*`
// keys) and MLX pack configs can both fill one. Validate refuses anything
// this package does not implement, so a model never runs with a rotation it
// would apply wrongly.
//
// An architecture uses it in three steps: at load, FromKeys (or Parse),
// New, and Prepare for the input width of every weight the declaration
// lists, refusing the file if a listed name is not a weight it rotates; in
// the forward pass, one Site per activation site (the normed input that
// q/k/v read, the one gate/up read, ...), bound to the activations, hands
// every weight its input, rotated or not; after an embedding lookup,
// Inverse on the rows of a table listed in InverseWeightNames.
package hadamard

import (
	"errors"
	"fmt"
	"slices"

	"trit/ops"
)

// Values of the declaration fields this package implements.
const (
	Version   = 1
	Transform = "normalized-sylvester-walsh-hadamard"
	Axis      = "input-last-dimension"
	// SignExplicit: one ±1 sign vector per input width is given.
	SignExplicit = "explicit"
	// SignIdentity: no signs (all +1).
	SignIdentity = "identity"
)

// MaxWidth bounds a sign width, so that a hostile file cannot make a
// runtime allocate without limit; real models use widths of a few ten
// thousand.
const MaxWidth = 1 << 24

// ErrInvalid is wrapped by every error about a declaration that is
// malformed or asks for something this package does not implement.
var ErrInvalid = errors.New("hadamard: unsupported or malformed declaration")

// ErrWidth is wrapped by errors about an activation width the declaration
// has no rotation for.
var ErrWidth = errors.New("hadamard: no rotation for width")

// Declaration is the rotation a model declares.
type Declaration struct {
	Version   int
	BlockSize int    // B: the transform acts on contiguous blocks of B values
	Transform string // must be Transform
	Axis      string // must be Axis
	SignMode  string // SignExplicit or SignIdentity
	// SignWidths lists the distinct input widths K that carry a sign
	// vector; SignValues concatenates those vectors (each ±1) in the same
	// order. Both are empty for SignIdentity.
	SignWidths []int
	SignValues []int8
	// WeightNames are the matrices stored as W′ = W·Rᵀ: their input
	// activations need Forward.
	WeightNames []string
	// InverseWeightNames are the tables whose rows are stored as R·e: a
	// looked-up row needs Inverse.
	InverseWeightNames []string
	// GDNVGrouped reports that the Gated DeltaNet output projection keeps
	// its input columns in the grouped value-head order of the original
	// checkpoint, so a runtime holding activations in tiled order permutes
	// them before the transform.
	GDNVGrouped bool
}

// Validate checks that d is well formed and that this package implements
// it. The error wraps ErrInvalid and names the offending field.
func (d *Declaration) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	switch {
	case d.Version != Version:
		return bad("version %d (trit implements version %d)", d.Version, Version)
	case d.BlockSize <= 0 || d.BlockSize&(d.BlockSize-1) != 0:
		return bad("block size %d is not a power of two", d.BlockSize)
	case d.BlockSize > ops.MaxHadamardBlock:
		return bad("block size %d exceeds %d", d.BlockSize, ops.MaxHadamardBlock)
	case d.Transform != Transform:
		return bad("transform %q (trit implements %q)", d.Transform, Transform)
	case d.Axis != Axis:
		return bad("axis %q (trit implements %q)", d.Axis, Axis)
	}
	switch d.SignMode {
	case SignIdentity:
		if len(d.SignWidths) != 0 || len(d.SignValues) != 0 {
			return bad("sign mode %q with %d sign widths and %d sign values", d.SignMode, len(d.SignWidths), len(d.SignValues))
		}
	case SignExplicit:
		if len(d.SignWidths) == 0 {
			return bad("sign mode %q without sign widths", d.SignMode)
		}
		total := 0
		for i, w := range d.SignWidths {
			if w <= 0 || w > MaxWidth {
				return bad("sign width %d out of range [1, %d]", w, MaxWidth)
			}
			if w%d.BlockSize != 0 {
				return bad("sign width %d is not a multiple of the block size %d", w, d.BlockSize)
			}
			if slices.Contains(d.SignWidths[:i], w) {
				return bad("sign width %d listed twice", w)
			}
			total += w
		}
		if total != len(d.SignValues) {
			return bad("%d sign values for sign widths summing to %d", len(d.SignValues), total)
		}
		for i, s := range d.SignValues {
			if s != 1 && s != -1 {
				return bad("sign value %d at index %d is not ±1", s, i)
			}
		}
	default:
		return bad("sign mode %q (trit implements %q and %q)", d.SignMode, SignExplicit, SignIdentity)
	}
	if len(d.WeightNames) == 0 && len(d.InverseWeightNames) == 0 {
		return bad("no weight names")
	}
	seen := map[string]bool{}
	for _, n := range slices.Concat(d.WeightNames, d.InverseWeightNames) {
		if n == "" {
			return bad("empty weight name")
		}
		if seen[n] {
			return bad("weight %q listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// Signs returns the sign vector for activations of the given width as
// float32 ±1 values, or nil with SignIdentity. It fails, wrapping ErrWidth,
// when width is not a multiple of the block size or (explicit signs) not
// among the sign widths. d must be valid.
func (d *Declaration) Signs(width int) ([]float32, error) {
	if width <= 0 || width%d.BlockSize != 0 {
		return nil, fmt.Errorf("%w %d: not a multiple of the block size %d", ErrWidth, width, d.BlockSize)
	}
	if d.SignMode == SignIdentity {
		return nil, nil
	}
	off := 0
	for _, w := range d.SignWidths {
		if w == width {
			s := make([]float32, w)
			for i, v := range d.SignValues[off : off+w] {
				s[i] = float32(v)
			}
			return s, nil
		}
		off += w
	}
	return nil, fmt.Errorf("%w %d: no sign vector (sign widths %v)", ErrWidth, width, d.SignWidths)
}

// Rotated reports whether name is among the weight names.
func (d *Declaration) Rotated(name string) bool { return slices.Contains(d.WeightNames, name) }

// InverseRotated reports whether name is among the inverse weight names.
func (d *Declaration) InverseRotated(name string) bool {
	return slices.Contains(d.InverseWeightNames, name)
}

// Rotation applies a valid Declaration: it holds the sign vector of every
// width it has been asked for. It is safe for concurrent use once every
// width in use has been prepared with Prepare.
type Rotation struct {
	decl  *Declaration
	signs map[int][]float32
}

// New validates d and returns its Rotation.
func New(d *Declaration) (*Rotation, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &Rotation{decl: d, signs: map[int][]float32{}}, nil
}

// Declaration returns the declaration r applies.
func (r *Rotation) Declaration() *Declaration { return r.decl }

// Prepare checks that r can rotate activations of the given width and
// caches its sign vector. A loader calls it for the input width of every
// rotated weight, so that a file whose declaration does not cover a width
// is refused at load time.
func (r *Rotation) Prepare(width int) error {
	if _, ok := r.signs[width]; ok {
		return nil
	}
	s, err := r.decl.Signs(width)
	if err != nil {
		return err
	}
	r.signs[width] = s
	return nil
}

// Forward rotates x in place for a folded weight: every row of width values
// becomes blockdiag(H_B)·(s ⊙ row). len(x) must be a multiple of width, and
// width must have been prepared.
func (r *Rotation) Forward(x []float32, width int) error {
	return r.apply(x, width, ops.HadamardForward)
}

// Inverse undoes Forward in place on every row of width values:
// row ← s ⊙ (blockdiag(H_B)·row). It restores rows of a table stored as R·e.
func (r *Rotation) Inverse(x []float32, width int) error {
	return r.apply(x, width, ops.HadamardInverse)
}

func (r *Rotation) apply(x []float32, width int, f func([]float32, int, []float32) error) error {
	s, ok := r.signs[width]
	if !ok {
		return fmt.Errorf("%w %d: not prepared", ErrWidth, width)
	}
	if width <= 0 || len(x)%width != 0 {
		return fmt.Errorf("%w %d: %d values are not whole rows", ErrWidth, width, len(x))
	}
	for i := 0; i < len(x); i += width {
		if err := f(x[i:i+width], r.decl.BlockSize, s); err != nil {
			return err
		}
	}
	return nil
}

// Site is one activation site of a layer: the input that several weights
// read (q/k/v share one, gate/up share one). It computes the rotated copy
// of its input at most once however many rotated weights read it, and
// hands the unrotated input to the others. The zero Site is ready for use
// with Bind.
type Site struct {
	rot     *Rotation
	x       []float32
	width   int
	buf     []float32
	rotated bool
	// Permute, if set, reorders each row before the rotation (the Gated
	// DeltaNet value-head order of a GDNVGrouped declaration); dst and src
	// do not overlap.
	Permute func(dst, src []float32)
}

// Bind points s at new activations: rows of width values in x, read by
// weights rotated with r (nil when the model has no rotation). The rotated
// copy lives in a buffer s keeps across calls.
func (s *Site) Bind(r *Rotation, x []float32, width int) {
	s.rot, s.x, s.width, s.rotated = r, x, width, false
}

// Input returns the activations for a weight: the bound input as is when
// rotated is false, else its rotated copy, computed on the first call after
// Bind. The width must have been prepared on the rotation.
func (s *Site) Input(rotated bool) ([]float32, error) {
	if !rotated {
		return s.x, nil
	}
	if s.rot == nil {
		return nil, fmt.Errorf("%w: rotated weight without a rotation", ErrInvalid)
	}
	if !s.rotated {
		if cap(s.buf) < len(s.x) {
			s.buf = make([]float32, len(s.x))
		}
		s.buf = s.buf[:len(s.x)]
		if s.Permute != nil && s.width > 0 {
			for i := 0; i+s.width <= len(s.x); i += s.width {
				s.Permute(s.buf[i:i+s.width], s.x[i:i+s.width])
			}
		} else {
			copy(s.buf, s.x)
		}
		if err := s.rot.Forward(s.buf, s.width); err != nil {
			return nil, err
		}
		s.rotated = true
	}
	return s.buf, nil
}
