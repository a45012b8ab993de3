package quant

import (
	"errors"
	"fmt"
	"math/bits"
)

var (
	// ErrLossy is returned when values cannot be carried into another
	// layout exactly.
	ErrLossy = errors.New("quant: transcoding would lose information")
	// ErrNotTernary is returned when Transcode is asked for a layout that
	// is not ternary.
	ErrNotTernary = errors.New("quant: not a ternary layout")
)

// TranscodeError reports why data cannot be transcoded from one layout to
// another. Err is the sentinel it wraps: ErrLossy, ErrSize or ErrNotTernary.
type TranscodeError struct {
	From, To string // format names
	Block    int    // index of the source block at fault, or -1
	Reason   string
	Err      error
}

func (e *TranscodeError) Error() string {
	if e.Block < 0 {
		return fmt.Sprintf("quant: %s → %s: %s", e.From, e.To, e.Reason)
	}
	return fmt.Sprintf("quant: %s → %s: block %d: %s", e.From, e.To, e.Block, e.Reason)
}

func (e *TranscodeError) Unwrap() error { return e.Err }

// Transcode rewrites data, rows of rowLen elements in ternary layout src,
// into ternary layout dst (destination first, as in copy), working on the
// codes and the fp16 scale bits directly, so the result decodes to exactly
// the same floats. It returns a new slice.
//
// It fails with a *TranscodeError wrapping ErrLossy when a block of dst
// would span source blocks whose scales differ (bit for bit) or a value has
// no code in dst (0 in Q1_0; +2d, code 3 of the 2-bit layouts, in Q1_0 and
// the base-3 packs); wrapping ErrSize when rowLen is not a positive multiple
// of both block sizes or data is not a whole number of rows; wrapping
// ErrNotTernary when either layout is not ternary.
//
// A base-3 byte (TQ1_0, PTQ1_0) written by another encoder than ggml's may
// be one of the few non-canonical encodings of its trits; it transcodes to
// the same values but comes back canonical.
func Transcode(dst, src *Format, data []byte, rowLen int) ([]byte, error) {
	fail := func(block int, err error, format string, args ...any) error {
		return &TranscodeError{From: src.Name, To: dst.Name, Block: block, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if src.tern == nil || dst.tern == nil {
		f := src
		if src.tern != nil {
			f = dst
		}
		return nil, fail(-1, ErrNotTernary, "%s is not a ternary layout", f.Name)
	}
	for _, f := range []*Format{src, dst} {
		if rowLen <= 0 || rowLen%f.BlockElems != 0 {
			return nil, fail(-1, ErrSize, "row length %d is not a multiple of the %s block (%d)", rowLen, f.Name, f.BlockElems)
		}
	}
	rowBytes := rowLen / src.BlockElems * src.BlockBytes
	if len(data)%rowBytes != 0 {
		return nil, fail(-1, ErrSize, "%d bytes is not a whole number of %d-byte rows", len(data), rowBytes)
	}
	nblocks := len(data) / src.BlockBytes
	out := make([]byte, nblocks*src.BlockElems/dst.BlockElems*dst.BlockBytes)

	// Work in chunks of lcm(src, dst) elements: a whole number of blocks
	// of both, and rows are whole numbers of chunks.
	chunk := lcm(src.BlockElems, dst.BlockElems)
	sPer, dPer := chunk/src.BlockElems, chunk/dst.BlockElems
	var (
		codes  [maxTernaryBlock]uint8
		scales [maxTernaryBlock / 64]uint16 // src blocks per chunk: at most 256/64
	)
	for c := 0; c < nblocks/sPer; c++ {
		for k := range sPer {
			b := c*sPer + k
			blk := data[b*src.BlockBytes:]
			cs := codes[k*src.BlockElems : (k+1)*src.BlockElems]
			scales[k] = src.tern.unpack(cs, blk)
			var seen uint8
			for _, v := range cs {
				seen |= 1 << v
			}
			if bad := seen &^ dst.tern.codes; bad != 0 {
				v := bits.TrailingZeros8(bad)
				return nil, fail(b, ErrLossy, "value %s has no code in %s", codeName[v], dst.Name)
			}
		}
		for j := range dPer {
			// The source blocks under destination block j share a scale.
			first := j * dst.BlockElems / src.BlockElems
			last := ((j+1)*dst.BlockElems - 1) / src.BlockElems
			for k := first + 1; k <= last; k++ {
				if scales[k] != scales[first] {
					return nil, fail(c*sPer+k, ErrLossy, "scale %#04x differs from %#04x of block %d, and %s has one scale per %d values",
						scales[k], scales[first], c*sPer+first, dst.Name, dst.Group)
				}
			}
			o := (c*dPer + j) * dst.BlockBytes
			dst.tern.pack(out[o:o+dst.BlockBytes], codes[j*dst.BlockElems:(j+1)*dst.BlockElems], scales[first])
		}
	}
	return out, nil
}

// codeName names the values of codes 0..3 for error messages.
var codeName = [4]string{"-d", "0", "+d", "+2d"}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
