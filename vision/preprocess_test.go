package vision

import (
	"math/rand/v2"
	"testing"

	"trit/picture"
)

// TestTargetSize: llama.cpp's size rule, cases worked by hand from the
// formulas of the reference README (f = 32).
func TestTargetSize(t *testing.T) {
	tests := []struct {
		name         string
		w, h         int
		budget       Budget
		wantW, wantH int
	}{
		{"a: below the minimum, scaled up", 64, 48, Budget{}, 128, 96},
		{"b: 80/32 = 2.5 rounds up", 100, 80, Budget{}, 96, 96},
		{"already a multiple", 256, 128, Budget{}, 256, 128},
		// round: 992×2016 > 16 tokens; β = √(2e6/16384) = 11.05;
		// ⌊1000/β/32⌋ = 2, ⌊2000/β/32⌋ = 5.
		{"above the maximum", 2000, 1000, Budget{MaxTokens: 16}, 160, 64},
		// β = √(65536/3072) = 4.62; ⌈48β/32⌉ = 7, ⌈64β/32⌉ = 10.
		{"--image-min-tokens 64", 64, 48, Budget{MinTokens: 64}, 320, 224},
		{"one pixel", 1, 1, Budget{}, 96, 96},
	}
	for _, tt := range tests {
		minPx, maxPx, err := tt.budget.pixels(32)
		if err != nil {
			t.Fatal(err)
		}
		w, h := TargetSize(tt.w, tt.h, 32, minPx, maxPx)
		if w != tt.wantW || h != tt.wantH {
			t.Errorf("%s: %d×%d → %d×%d, want %d×%d", tt.name, tt.w, tt.h, w, h, tt.wantW, tt.wantH)
		}
	}
}

func TestBudgetCheck(t *testing.T) {
	for _, b := range []Budget{{MinTokens: 10, MaxTokens: 5}, {MinTokens: -1}, {MaxTokens: 1 << 30}} {
		if _, err := b.Check(); err == nil {
			t.Errorf("%+v accepted", b)
		}
	}
	if b, err := (Budget{}).Check(); err != nil || b.MinTokens != DefaultMinTokens || b.MaxTokens != DefaultMaxTokens {
		t.Errorf("defaults: %+v, %v", b, err)
	}
}

// TestFitPads: a picture of another aspect ratio is scaled to fit and
// centred on black.
func TestFitPads(t *testing.T) {
	img := &picture.RGB{W: 4, H: 2, Pix: make([]uint8, 24)}
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	out := Fit(img, 8, 8)
	// s = 2: the picture is 8×4 at y = 2.
	for y := range 8 {
		want := uint8(0)
		if y >= 2 && y < 6 {
			want = 200
		}
		for x := range 8 {
			if got := out.At(x, y, 1); got != want {
				t.Fatalf("pixel (%d,%d) = %d, want %d", x, y, got, want)
			}
		}
	}
}

// FuzzPreprocess: any decodable image and budget give a tower input of
// whole merged patches, or an error.
func FuzzPreprocess(f *testing.F) {
	f.Add(uint16(64), uint16(48), uint16(0), uint16(0), uint64(1))
	f.Add(uint16(1), uint16(2000), uint16(8), uint16(16), uint64(2))
	f.Add(uint16(3000), uint16(1), uint16(100), uint16(90), uint64(3))
	f.Fuzz(func(t *testing.T, w, h, lo, hi uint16, seed uint64) {
		if w == 0 || h == 0 || int(w)*int(h) > 1<<20 {
			return
		}
		img := &picture.RGB{W: int(w), H: int(h), Pix: make([]uint8, 3*int(w)*int(h))}
		rng := rand.New(rand.NewPCG(seed, 0))
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.IntN(256))
		}
		b := Budget{MinTokens: int(lo % 512), MaxTokens: int(hi % 512)}
		px, err := Preprocess(img, 32, [3]float32{0.5, 0.5, 0.5}, [3]float32{0.5, 0.5, 0.5}, b)
		if err != nil {
			return
		}
		W, H := px.Image.W, px.Image.H
		if W <= 0 || H <= 0 || W%32 != 0 || H%32 != 0 || len(px.Norm) != 3*W*H {
			t.Fatalf("%d×%d under %+v → %d×%d with %d values", w, h, b, W, H, len(px.Norm))
		}
	})
}
