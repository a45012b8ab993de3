package vision

import (
	"errors"
	"fmt"
	"math"

	"trit/picture"
)

// Token limits of the qwen3vl_merger projector in llama.cpp: an image gets
// between 8 and 4096 merged tokens unless the caller asks otherwise.
const (
	DefaultMinTokens = 8
	DefaultMaxTokens = 4096
)

// Budget bounds the number of merged tokens an image is resized to
// (llama.cpp's --image-min-tokens / --image-max-tokens). Zero fields take
// the defaults.
type Budget struct {
	MinTokens, MaxTokens int
}

// ErrBudget is returned for a token budget that cannot be met.
var ErrBudget = errors.New("vision: invalid image token budget")

// Check reports whether the budget is valid, returning it with the
// defaults filled in.
func (b Budget) Check() (Budget, error) {
	if _, _, err := b.pixels(1); err != nil {
		return b, err
	}
	if b.MinTokens == 0 {
		b.MinTokens = DefaultMinTokens
	}
	if b.MaxTokens == 0 {
		b.MaxTokens = DefaultMaxTokens
	}
	return b, nil
}

// pixels returns the budget in pixels for a merged-token side of f pixels.
func (b Budget) pixels(f int) (minPx, maxPx int, err error) {
	lo, hi := b.MinTokens, b.MaxTokens
	if lo == 0 {
		lo = DefaultMinTokens
	}
	if hi == 0 {
		hi = DefaultMaxTokens
	}
	if lo < 1 || hi < lo || hi > 1<<20 {
		return 0, 0, fmt.Errorf("%w: %d…%d tokens", ErrBudget, lo, hi)
	}
	return lo * f * f, hi * f * f, nil
}

// TargetSize is llama.cpp's "smart resize": the size, a multiple of f on
// both sides, an image of w×h pixels is brought to so that its pixel count
// lies within [minPx, maxPx] at about the same aspect ratio. Arithmetic is
// float32 and rounding is half away from zero, as in C++'s std::round.
func TargetSize(w, h, f, minPx, maxPx int) (tw, th int) {
	ff := float32(f)
	round := func(v int) int { return max(f, int(math.Round(float64(float32(v)/ff)))*f) }
	th, tw = round(h), round(w)
	switch {
	case th*tw > maxPx:
		beta := float32(math.Sqrt(float64(float32(h*w) / float32(maxPx))))
		th = max(f, int(math.Floor(float64(float32(h)/beta/ff)))*f)
		tw = max(f, int(math.Floor(float64(float32(w)/beta/ff)))*f)
	case th*tw < minPx:
		beta := float32(math.Sqrt(float64(float32(minPx) / float32(h*w))))
		th = int(math.Ceil(float64(float32(h)*beta/ff))) * f
		tw = int(math.Ceil(float64(float32(w)*beta/ff))) * f
	}
	return tw, th
}

// Fit resizes img to tw×th keeping its aspect ratio: it is scaled by the
// smaller of the two ratios with align-corners bilinear interpolation and
// pasted in the middle of a black canvas (llama.cpp's PAD_CEIL).
func Fit(img *picture.RGB, tw, th int) *picture.RGB {
	out := &picture.RGB{W: tw, H: th, Pix: make([]uint8, 3*tw*th)}
	if img.W == tw && img.H == th {
		copy(out.Pix, img.Pix)
		return out
	}
	s := min(float32(tw)/float32(img.W), float32(th)/float32(img.H))
	w := min(int(math.Ceil(float64(float32(img.W)*s))), tw)
	h := min(int(math.Ceil(float64(float32(img.H)*s))), th)
	r := bilinear(img, w, h)
	x0, y0 := (tw-w)/2, (th-h)/2
	for y := range h {
		copy(out.Pix[((y0+y)*tw+x0)*3:], r.Pix[y*w*3:(y+1)*w*3])
	}
	return out
}

// bilinear resizes img to w×h with align-corners sampling (the corner
// pixels map onto each other), float32 interpolation and truncation back
// to bytes, as llama.cpp's img_tool does.
func bilinear(img *picture.RGB, w, h int) *picture.RGB {
	out := &picture.RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)}
	var rx, ry float32
	if w > 1 {
		rx = float32(img.W-1) / float32(w-1)
	}
	if h > 1 {
		ry = float32(img.H-1) / float32(h-1)
	}
	// The conversion keeps the product from fusing into an FMA.
	lerp := func(a, b, t float32) float32 { return a + float32((b-a)*t) }
	i := 0
	for y := range h {
		py := float32(y) * ry
		y0 := min(int(py), img.H-1)
		y1 := min(y0+1, img.H-1)
		fy := py - float32(y0)
		for x := range w {
			px := float32(x) * rx
			x0 := min(int(px), img.W-1)
			x1 := min(x0+1, img.W-1)
			fx := px - float32(x0)
			for c := range 3 {
				a := float32(img.At(x0, y0, c))
				b := float32(img.At(x1, y0, c))
				cc := float32(img.At(x0, y1, c))
				e := float32(img.At(x1, y1, c))
				top := lerp(a, b, fx)
				bottom := lerp(cc, e, fx)
				out.Pix[i] = uint8(lerp(top, bottom, fy))
				i++
			}
		}
	}
	return out
}

// Pixels is an image ready for the tower: resized and padded to a multiple
// of the merged patch size, and normalised.
type Pixels struct {
	Image *picture.RGB // the resized uint8 image
	// Norm holds (u8/255 − mean[c]) / std[c] as float32, laid out
	// [height][width][3].
	Norm []float32
}

// Preprocess resizes and normalises img for a tower with merged-token side
// f pixels and the given channel mean and std.
func Preprocess(img *picture.RGB, f int, mean, std [3]float32, b Budget) (*Pixels, error) {
	minPx, maxPx, err := b.pixels(f)
	if err != nil {
		return nil, err
	}
	if img.W <= 0 || img.H <= 0 || len(img.Pix) != 3*img.W*img.H {
		return nil, fmt.Errorf("vision: image of %d×%d pixels with %d bytes", img.W, img.H, len(img.Pix))
	}
	tw, th := TargetSize(img.W, img.H, f, minPx, maxPx)
	r := Fit(img, tw, th)
	p := &Pixels{Image: r, Norm: make([]float32, len(r.Pix))}
	for i, u := range r.Pix {
		c := i % 3
		p.Norm[i] = (float32(u)/255 - mean[c]) / std[c]
	}
	return p, nil
}
