package picture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// quadrants is a w×h image whose four quadrants are red, green, blue and
// white (top-left, top-right, bottom-left, bottom-right): large flat areas
// survive JPEG.
func quadrants(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cols := []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}}
	for y := range h {
		for x := range w {
			q := 0
			if x >= w/2 {
				q++
			}
			if y >= h/2 {
				q += 2
			}
			img.SetNRGBA(x, y, cols[q])
		}
	}
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, img image.Image, orientation int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	if orientation == 0 {
		return b.Bytes()
	}
	// APP1 "Exif\0\0" + little-endian TIFF with one IFD0 entry.
	var tiff bytes.Buffer
	tiff.WriteString("II*\x00")
	binary.Write(&tiff, binary.LittleEndian, uint32(8))
	binary.Write(&tiff, binary.LittleEndian, uint16(1))
	binary.Write(&tiff, binary.LittleEndian, []uint16{0x0112, 3})
	binary.Write(&tiff, binary.LittleEndian, uint32(1))
	binary.Write(&tiff, binary.LittleEndian, []uint16{uint16(orientation), 0})
	binary.Write(&tiff, binary.LittleEndian, uint32(0))
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	out := []byte{0xff, 0xd8, 0xff, 0xe1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out = append(out, seg...)
	return append(out, b.Bytes()[2:]...)
}

// encodeGIF writes two frames: img, then its colours inverted.
func encodeGIF(t testing.TB, img image.Image) []byte {
	t.Helper()
	b := img.Bounds()
	f0 := image.NewPaletted(b, palette.Plan9)
	f1 := image.NewPaletted(b, palette.Plan9)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			f0.Set(x, y, img.At(x, y))
			f1.Set(x, y, color.RGBA{uint8(255 - r>>8), uint8(255 - g>>8), uint8(255 - bl>>8), 255})
		}
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{f0, f1}, Delay: []int{0, 0}}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bitWriter writes the LSB-first bit stream of WebP lossless.
type bitWriter struct {
	b    []byte
	nbit uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := range n {
		if w.nbit%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.nbit % 8)
		w.nbit++
	}
}

// encodeWebP writes a lossless WebP of one colour: every prefix code is a
// one-symbol code, so the pixels take no bits.
func encodeWebP(w, h int, c color.NRGBA) []byte {
	var bw bitWriter
	bw.put(0x2f, 8)
	bw.put(uint32(w-1), 14)
	bw.put(uint32(h-1), 14)
	bw.put(0, 1) // no alpha
	bw.put(0, 3) // version
	bw.put(0, 1) // no transform
	bw.put(0, 1) // no colour cache
	bw.put(0, 1) // no meta prefix codes
	for _, sym := range []uint8{c.G, c.R, c.B, c.A, 0} {
		bw.put(1, 1) // simple code
		bw.put(0, 1) // one symbol
		bw.put(1, 1) // 8-bit symbol
		bw.put(uint32(sym), 8)
	}
	data := bw.b
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	chunk = append(chunk, data...)
	if len(data)%2 == 1 {
		chunk = append(chunk, 0)
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	out = append(out, "WEBP"...)
	return append(out, chunk...)
}

// pngClaiming returns a PNG whose header claims w×h pixels, padded to size
// bytes with a valid IHDR checksum: a decompression bomb's header.
func pngClaiming(t testing.TB, w, h uint32, size int) []byte {
	b := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)))
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	for len(b) < size {
		b = append(b, 0)
	}
	return b
}

// near reports whether pixel (x, y) of m is within tol of c in every channel.
func near(m *RGB, x, y int, c [3]uint8, tol int) bool {
	for i := range 3 {
		d := int(m.At(x, y, i)) - int(c[i])
		if d < -tol || d > tol {
			return false
		}
	}
	return true
}

var (
	red   = [3]uint8{255, 0, 0}
	green = [3]uint8{0, 255, 0}
	blue  = [3]uint8{0, 0, 255}
	white = [3]uint8{255, 255, 255}
)

func TestDecodeFormats(t *testing.T) {
	img := quadrants(16, 8)
	tests := []struct {
		name string
		data []byte
		tol  int
	}{
		{"png", encodePNG(t, img), 0},
		{"jpeg", encodeJPEG(t, img, 0), 40},
		{"jpeg orientation 1", encodeJPEG(t, img, 1), 40},
		{"gif first frame", encodeGIF(t, img), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if m.W != 16 || m.H != 8 || len(m.Pix) != 3*16*8 {
				t.Fatalf("got %d×%d (%d bytes)", m.W, m.H, len(m.Pix))
			}
			for _, p := range []struct {
				x, y int
				c    [3]uint8
			}{{2, 1, red}, {13, 1, green}, {2, 6, blue}, {13, 6, white}} {
				if !near(m, p.x, p.y, p.c, tt.tol) {
					t.Errorf("pixel (%d,%d) = %v, want %v", p.x, p.y, m.Pix[(p.y*m.W+p.x)*3:][:3], p.c)
				}
			}
		})
	}
}

func TestDecodeWebP(t *testing.T) {
	m, err := Decode(encodeWebP(5, 3, color.NRGBA{10, 200, 30, 255}), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if m.W != 5 || m.H != 3 {
		t.Fatalf("got %d×%d", m.W, m.H)
	}
	for y := range 3 {
		for x := range 5 {
			if !near(m, x, y, [3]uint8{10, 200, 30}, 0) {
				t.Fatalf("pixel (%d,%d) = %v", x, y, m.Pix[(y*5+x)*3:][:3])
			}
		}
	}
}

func TestDecodeDropsAlpha(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.SetNRGBA(0, 0, color.NRGBA{200, 100, 50, 10})
	m, err := Decode(encodePNG(t, img), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(m, 0, 0, [3]uint8{200, 100, 50}, 0) {
		t.Fatalf("got %v, want the colour without its alpha", m.Pix)
	}
}

// TestEXIFOrientation checks all eight orientations on the quadrant image:
// where each colour lands once the image is upright.
func TestEXIFOrientation(t *testing.T) {
	img := quadrants(16, 8)
	// Corners of the upright image: top-left, top-right, bottom-left, bottom-right.
	tests := []struct {
		o          int
		w, h       int
		tl, tr, bl [3]uint8
	}{
		{1, 16, 8, red, green, blue},
		{2, 16, 8, green, red, white},
		{3, 16, 8, white, blue, green},
		{4, 16, 8, blue, white, red},
		{5, 8, 16, red, blue, green},
		{6, 8, 16, blue, red, white},
		{7, 8, 16, white, green, blue},
		{8, 8, 16, green, white, red},
	}
	for _, tt := range tests {
		m, err := Decode(encodeJPEG(t, img, tt.o), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if m.W != tt.w || m.H != tt.h {
			t.Errorf("orientation %d: %d×%d, want %d×%d", tt.o, m.W, m.H, tt.w, tt.h)
			continue
		}
		for _, p := range []struct {
			x, y int
			c    [3]uint8
		}{{1, 1, tt.tl}, {m.W - 2, 1, tt.tr}, {1, m.H - 2, tt.bl}} {
			if !near(m, p.x, p.y, p.c, 40) {
				t.Errorf("orientation %d: pixel (%d,%d) = %v, want %v", tt.o, p.x, p.y, m.Pix[(p.y*m.W+p.x)*3:][:3], p.c)
			}
		}
	}
}

func TestDecodeBadInput(t *testing.T) {
	good := encodePNG(t, quadrants(16, 8))
	corrupt := bytes.Clone(good)
	for i := 40; i < len(corrupt)-12; i++ {
		corrupt[i] ^= 0x5a
	}
	tests := []struct {
		name string
		data []byte
		lim  Limits
		is   error
	}{
		{"empty", nil, Limits{}, ErrFormat},
		{"bmp", append([]byte("BM"), make([]byte, 60)...), Limits{}, ErrFormat},
		{"text", []byte("What is in this image?"), Limits{}, ErrFormat},
		{"bomb 50000x50000 in 64 KB", pngClaiming(t, 50000, 50000, 64<<10), Limits{}, ErrTooLarge},
		{"over the pixel limit", good, Limits{MaxPixels: 100}, ErrTooLarge},
		{"over the side limit", good, Limits{MaxSide: 15}, ErrTooLarge},
		{"png truncated", good[:len(good)/2], Limits{}, nil},
		{"png header only", good[:12], Limits{}, nil},
		{"png corrupt", corrupt, Limits{}, nil},
		{"jpeg truncated", encodeJPEG(t, quadrants(16, 8), 6)[:100], Limits{}, nil},
		{"gif truncated", encodeGIF(t, quadrants(16, 8))[:30], Limits{}, nil},
		{"webp truncated", encodeWebP(5, 3, color.NRGBA{A: 255})[:20], Limits{}, nil},
		{"zero width", pngClaiming(t, 0, 5, 100), Limits{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.data, tt.lim)
			if err == nil {
				t.Fatalf("decoded %d×%d, want an error", m.W, m.H)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
			t.Log(err)
		})
	}
}

func FuzzDecode(f *testing.F) {
	img := quadrants(6, 4)
	f.Add(encodePNG(f, img))
	f.Add(encodeJPEG(f, img, 6))
	f.Add(encodeGIF(f, img))
	f.Add(encodeWebP(3, 2, color.NRGBA{1, 2, 3, 255}))
	f.Add(pngClaiming(f, 1<<20, 1<<20, 200))
	lim := Limits{MaxPixels: 1 << 16, MaxSide: 1024}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, lim)
		if err != nil {
			return
		}
		if m.W <= 0 || m.H <= 0 || m.W > lim.MaxSide || m.H > lim.MaxSide || m.W*m.H > lim.MaxPixels || len(m.Pix) != 3*m.W*m.H {
			t.Fatalf("decoded %d×%d with %d bytes under %+v", m.W, m.H, len(m.Pix), lim)
		}
	})
}

// TestGIFFirstFrameSmaller: a first frame covering part of the logical
// screen decodes to the frame.
func TestGIFFirstFrameSmaller(t *testing.T) {
	f := image.NewPaletted(image.Rect(2, 1, 6, 4), palette.Plan9)
	for i := range f.Pix {
		f.Pix[i] = 3
	}
	var buf bytes.Buffer
	g := &gif.GIF{Image: []*image.Paletted{f}, Delay: []int{0}, Config: image.Config{ColorModel: f.Palette, Width: 8, Height: 6}}
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	m, err := Decode(buf.Bytes(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if m.W != 4 || m.H != 3 {
		t.Fatalf("got %d×%d, want the 4×3 frame", m.W, m.H)
	}
}
