package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"trit/picture"
	"trit/vision"
)

// visionFlags are the image flags, with llama.cpp's names.
type visionFlags struct {
	mmproj           string
	minTok, maxTok   int
	idle             time.Duration
	maxImageBytes    int64
	maxImagesPerTurn int
}

func (v *visionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&v.mmproj, "mmproj", "", "vision tower `file` (an mmproj GGUF of projector qwen3vl_merger); loaded when the first image arrives")
	fs.IntVar(&v.minTok, "image-min-tokens", 0, fmt.Sprintf("fewest tokens an image is resized to (0: %d)", vision.DefaultMinTokens))
	fs.IntVar(&v.maxTok, "image-max-tokens", 0, fmt.Sprintf("most tokens an image is resized to (0: %d)", vision.DefaultMaxTokens))
	fs.DurationVar(&v.idle, "mmproj-idle", 5*time.Minute, "release the vision tower after this long without an image (0: keep it)")
	fs.Int64Var(&v.maxImageBytes, "image-max-bytes", 32<<20, "largest image file accepted")
	fs.IntVar(&v.maxImagesPerTurn, "image-max-count", 16, "most images in one prompt")
}

func (v *visionFlags) budget() vision.Budget {
	return vision.Budget{MinTokens: v.minTok, MaxTokens: v.maxTok}
}

// errNoVision is the error for an image given to a model without a tower.
var errNoVision = errors.New("this model has no vision tower loaded: start with --mmproj")

// lazy returns the tower named by --mmproj, mapped on first use; nil
// without --mmproj.
func (v *visionFlags) lazy(threads int, stderr io.Writer) (*vision.Lazy, error) {
	if v.mmproj == "" {
		return nil, nil
	}
	if _, err := v.budget().Check(); err != nil {
		return nil, err
	}
	l, err := vision.NewLazy(v.mmproj, vision.Options{Threads: threads}, v.idle)
	if err != nil {
		return nil, fmt.Errorf("--mmproj: %w", err)
	}
	fmt.Fprintf(stderr, "trit: vision tower %s (mapped when the first image arrives)\n", v.mmproj)
	return l, nil
}

// readImage reads an image file within the size limit.
func (v *visionFlags) readImage(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, v.maxImageBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > v.maxImageBytes {
		return nil, fmt.Errorf("%s: %w: over %d bytes (--image-max-bytes)", path, picture.ErrTooLarge, v.maxImageBytes)
	}
	return data, nil
}

// encodeFiles encodes image files with the tower.
func (v *visionFlags) encodeFiles(l *vision.Lazy, paths []string, stderr io.Writer) ([]*vision.Image, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if l == nil {
		return nil, errNoVision
	}
	if len(paths) > v.maxImagesPerTurn {
		return nil, fmt.Errorf("%d images: at most %d (--image-max-count)", len(paths), v.maxImagesPerTurn)
	}
	var out []*vision.Image
	for _, p := range paths {
		data, err := v.readImage(p)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		var img *vision.Image
		err = l.Use(func(t *vision.Tower) error {
			img, err = t.EncodeImage(data, picture.Limits{}, v.budget())
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		fmt.Fprintf(stderr, "trit: image %s: %d×%d → %d tokens (%d×%d) in %v\n", p, img.Pixels.Image.W, img.Pixels.Image.H,
			img.N(), img.GridX, img.GridY, time.Since(t0).Round(time.Millisecond))
		out = append(out, img)
	}
	return out, nil
}
