// Package quant describes the block formats of GGUF tensors: sizes, names,
// reference decoders and encoders, and lossless transcoding between the
// ternary layouts. Everything about a format lives in one table entry.
package quant

import (
	"errors"
	"fmt"
)

// Type is a ggml tensor type id as stored in a GGUF tensor info.
type Type uint32

// The ggml type ids trit knows. Id 42 has two layouts (see Q2_0 and Q2_0g64).
const (
	TypeF32    Type = 0
	TypeF16    Type = 1
	TypeQ4_0   Type = 2
	TypeQ8_0   Type = 8
	TypeQ4_K   Type = 12
	TypeQ6_K   Type = 14
	TypeBF16   Type = 30
	TypeTQ1_0  Type = 34
	TypeTQ2_0  Type = 35
	TypeQ1_0   Type = 41
	TypeQ2_0   Type = 42
	TypePQ2_0  Type = 142
	TypePTQ1_0 Type = 143
)

// Format is one concrete block layout. Formats are compared by pointer.
type Format struct {
	Type       Type   // ggml type id written to GGUF
	Name       string // unique name, e.g. "Q2_0" (group 128) or "Q2_0_g64"
	BlockElems int    // elements per block
	BlockBytes int    // bytes per block
	// Ternary is true for layouts whose values are code×scale with codes in
	// {-1, 0, +1} (Q1_0, binary, counts too: its values are ±scale).
	Ternary bool
	// Group is the number of consecutive elements that share one scale.
	Group int

	// The codec, so that everything about a layout lives in its table
	// entry. decode and encode see whole blocks with sizes already checked.
	decode func(dst []float32, src []byte)
	encode func(dst []byte, src []float32)
	// tern is the code-level view of a ternary layout (nil otherwise); it
	// drives lossless transcoding.
	tern *ternary
}

// The formats. Q2_0 is Prism ML's group-128 layout (Ternary Bonsai v1
// files), Q2_0g64 the upstream group-64 layout; both use type id 42.
var (
	F32     = &Format{Type: TypeF32, Name: "F32", BlockElems: 1, BlockBytes: 4, Group: 1, decode: decodeF32, encode: encodeF32}
	F16     = &Format{Type: TypeF16, Name: "F16", BlockElems: 1, BlockBytes: 2, Group: 1, decode: decodeF16, encode: encodeF16}
	BF16    = &Format{Type: TypeBF16, Name: "BF16", BlockElems: 1, BlockBytes: 2, Group: 1, decode: decodeBF16, encode: encodeBF16}
	Q4_0    = &Format{Type: TypeQ4_0, Name: "Q4_0", BlockElems: 32, BlockBytes: 18, Group: 32, decode: decodeQ4_0, encode: encodeQ4_0}
	Q8_0    = &Format{Type: TypeQ8_0, Name: "Q8_0", BlockElems: 32, BlockBytes: 34, Group: 32, decode: decodeQ8_0, encode: encodeQ8_0}
	Q4_K    = &Format{Type: TypeQ4_K, Name: "Q4_K", BlockElems: 256, BlockBytes: 144, Group: 32, decode: decodeQ4_K, encode: encodeQ4_K}
	Q6_K    = &Format{Type: TypeQ6_K, Name: "Q6_K", BlockElems: 256, BlockBytes: 210, Group: 16, decode: decodeQ6_K, encode: encodeQ6_K}
	TQ1_0   = ternaryFormat(&Format{Type: TypeTQ1_0, Name: "TQ1_0", BlockElems: 256, BlockBytes: 54, Ternary: true, Group: 256}, tq1_0Codec)
	TQ2_0   = ternaryFormat(&Format{Type: TypeTQ2_0, Name: "TQ2_0", BlockElems: 256, BlockBytes: 66, Ternary: true, Group: 256}, tq2_0Codec)
	Q1_0    = ternaryFormat(&Format{Type: TypeQ1_0, Name: "Q1_0", BlockElems: 128, BlockBytes: 18, Ternary: true, Group: 128}, q1_0Codec)
	Q2_0    = ternaryFormat(&Format{Type: TypeQ2_0, Name: "Q2_0", BlockElems: 128, BlockBytes: 34, Ternary: true, Group: 128}, q2Codec)
	Q2_0g64 = ternaryFormat(&Format{Type: TypeQ2_0, Name: "Q2_0_g64", BlockElems: 64, BlockBytes: 18, Ternary: true, Group: 64}, q2Codec)
	PQ2_0   = ternaryFormat(&Format{Type: TypePQ2_0, Name: "PQ2_0", BlockElems: 128, BlockBytes: 34, Ternary: true, Group: 128}, q2Codec)
	PTQ1_0  = ternaryFormat(&Format{Type: TypePTQ1_0, Name: "PTQ1_0", BlockElems: 128, BlockBytes: 28, Ternary: true, Group: 128}, ptq1_0Codec)
)

// All lists every format, in type-id order.
var All = []*Format{F32, F16, Q4_0, Q8_0, Q4_K, Q6_K, BF16, TQ1_0, TQ2_0, Q1_0, Q2_0, Q2_0g64, PQ2_0, PTQ1_0}

// ErrUnknownType is returned for a type id trit has no format for.
var ErrUnknownType = errors.New("quant: unknown type")

// Candidates returns the formats stored under type id t: one for most ids,
// two for id 42 (group 128 first), none for an unknown id.
func Candidates(t Type) []*Format {
	var out []*Format
	for _, f := range All {
		if f.Type == t {
			out = append(out, f)
		}
	}
	return out
}

// ByName returns the format with the given name (case-sensitive, as in
// the table: "Q2_0", "Q2_0_g64", "PQ2_0", ...), or nil.
func ByName(name string) *Format {
	for _, f := range All {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// RowBytes returns the byte size of n elements, or an error when n is not a
// whole number of blocks.
func (f *Format) RowBytes(n int64) (int64, error) {
	if f.BlockElems <= 0 || n < 0 || n%int64(f.BlockElems) != 0 {
		return 0, fmt.Errorf("quant: %s: %d elements is not a multiple of the block size %d", f.Name, n, f.BlockElems)
	}
	return n / int64(f.BlockElems) * int64(f.BlockBytes), nil
}

// BitsPerWeight returns the storage cost of one element in bits.
func (f *Format) BitsPerWeight() float64 {
	return float64(f.BlockBytes*8) / float64(f.BlockElems)
}

// String returns the format's name.
func (f *Format) String() string { return f.Name }
