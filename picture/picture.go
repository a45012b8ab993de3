// Package picture decodes image files (PNG, JPEG, GIF, WebP) into 8-bit
// RGB pixels, the input of a vision tower.
//
// The dimensions are read from the file's header and checked against a
// pixel budget before anything is decoded, so a small file that claims a
// huge image is refused instead of allocated. JPEG files are turned upright
// by their EXIF orientation; a GIF gives its first frame. Alpha is dropped,
// not composited, as stb_image does when llama.cpp asks it for 3 channels.
package picture

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"
)

// RGB is an image of W×H pixels, three bytes (R, G, B) each, rows top to
// bottom.
type RGB struct {
	W, H int
	Pix  []uint8 // len 3·W·H
}

// At returns the channel c (0 R, 1 G, 2 B) of pixel (x, y).
func (m *RGB) At(x, y, c int) uint8 { return m.Pix[(y*m.W+x)*3+c] }

var (
	// ErrFormat is returned for data that is not a PNG, JPEG, GIF or WebP file.
	ErrFormat = errors.New("picture: unsupported image format (PNG, JPEG, GIF and WebP are)")
	// ErrTooLarge is wrapped by errors about an image above the limits.
	ErrTooLarge = errors.New("picture: image too large")
)

// Limits bound what Decode accepts. Zero fields take the defaults.
type Limits struct {
	MaxPixels int // width × height; default 64 Mpixel
	MaxSide   int // either dimension; default 16384
}

const (
	defaultMaxPixels = 64 << 20
	defaultMaxSide   = 16384
)

// SizeError reports an image whose header dimensions exceed the limits.
type SizeError struct {
	Format      string
	W, H        int
	Side, Total int // the limits it broke
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("picture: %s image of %d×%d pixels exceeds the limit (%d per side, %d in all)", e.Format, e.W, e.H, e.Side, e.Total)
}

func (e *SizeError) Unwrap() error { return ErrTooLarge }

// decoders are the formats Decode reads, tried by their magic bytes.
var decoders = []struct {
	name   string
	match  func([]byte) bool
	config func([]byte) (image.Config, error)
	decode func([]byte) (image.Image, error)
}{
	{"png", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
		func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }},
	{"jpeg", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8")) },
		func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }},
	{"gif", func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	},
		func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) }},
	{"webp", func(b []byte) bool { return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" },
		func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return webp.Decode(bytes.NewReader(b)) }},
}

// Decode decodes an image file held in data.
func Decode(data []byte, lim Limits) (*RGB, error) {
	if lim.MaxPixels <= 0 {
		lim.MaxPixels = defaultMaxPixels
	}
	if lim.MaxSide <= 0 {
		lim.MaxSide = defaultMaxSide
	}
	for _, d := range decoders {
		if !d.match(data) {
			continue
		}
		cfg, err := d.config(data)
		if err != nil {
			return nil, fmt.Errorf("picture: %s header: %w", d.name, err)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return nil, fmt.Errorf("picture: %s image of %d×%d pixels", d.name, cfg.Width, cfg.Height)
		}
		if cfg.Width > lim.MaxSide || cfg.Height > lim.MaxSide || cfg.Width*cfg.Height > lim.MaxPixels {
			return nil, &SizeError{Format: d.name, W: cfg.Width, H: cfg.Height, Side: lim.MaxSide, Total: lim.MaxPixels}
		}
		img, err := d.decode(data)
		if err != nil {
			return nil, fmt.Errorf("picture: %s: %w", d.name, err)
		}
		// A GIF's first frame may cover part of its logical screen; no
		// image may be larger than its header said.
		b := img.Bounds()
		if b.Dx() <= 0 || b.Dy() <= 0 || b.Dx() > cfg.Width || b.Dy() > cfg.Height {
			return nil, fmt.Errorf("picture: %s: decoded %d×%d pixels, header says %d×%d", d.name, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
		}
		m := toRGB(img)
		if d.name == "jpeg" {
			m = m.orient(exifOrientation(data))
		}
		return m, nil
	}
	return nil, ErrFormat
}

// toRGB copies img's colour channels, dropping alpha without compositing.
func toRGB(img image.Image) *RGB {
	b := img.Bounds()
	m := &RGB{W: b.Dx(), H: b.Dy()}
	m.Pix = make([]uint8, 3*m.W*m.H)
	i := 0
	switch src := img.(type) {
	case *image.RGBA:
		// Opaque RGBA is what the PNG decoder gives for 8-bit RGB files;
		// premultiplied values of a translucent pixel are what stb would
		// not give, so only opaque pixels take this fast path.
		if src.Opaque() {
			for y := b.Min.Y; y < b.Max.Y; y++ {
				row := src.Pix[src.PixOffset(b.Min.X, y):]
				for x := range m.W {
					copy(m.Pix[i:i+3], row[4*x:4*x+3])
					i += 3
				}
			}
			return m
		}
	case *image.NRGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := src.Pix[src.PixOffset(b.Min.X, y):]
			for x := range m.W {
				copy(m.Pix[i:i+3], row[4*x:4*x+3])
				i += 3
			}
		}
		return m
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2] = uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8)
			i += 3
		}
	}
	return m
}
