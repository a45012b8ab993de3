package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"trit/model"
	"trit/picture"
	"trit/quant"
	"trit/tokenizer"
	"trit/vision"
)

func init() {
	register(&command{
		name:  "logits",
		usage: "-m MODEL (--ids 1,2,3 | --mmproj P --image I --prompt TEXT | --embeddings-in F --prompt TEXT) [--mode batch|sequential] [--json]",
		short: "print the logits the model computes for given token ids",
		run:   runLogits,
	})
}

func runLogits(args []string, stdout, stderr io.Writer) error {
	c := commands["logits"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	// Reference runs (llama.cpp's included) keep the cache in float32.
	mf.registerCache(fs, quant.F32)
	var idsFlag, mode string
	var asJSON bool
	var top int
	fs.StringVar(&idsFlag, "ids", "", "comma-separated token ids")
	fs.StringVar(&mode, "mode", "batch", "batch (all ids in one forward pass) or sequential (one at a time)")
	fs.BoolVar(&asJSON, "json", false, "print the logits as JSON (the layout of the reference files)")
	fs.IntVar(&top, "top", 5, "without --json: the top entries printed per position")
	var vf visionFlags
	vf.register(fs)
	var image, prompt, embIn string
	fs.StringVar(&image, "image", "", "image `file` placed at the prompt's "+vision.Marker+" (or before the prompt); needs --mmproj")
	fs.StringVar(&prompt, "prompt", "", "prompt text for --image or --embeddings-in (special tokens parsed)")
	fs.StringVar(&embIn, "embeddings-in", "", "JSON `file` in the reference layout whose embeddings, grid_x and grid_y stand for the image (no tower run)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if image != "" || embIn != "" {
		if idsFlag != "" || (image != "" && embIn != "") {
			fmt.Fprintln(stderr, "trit logits: give --ids, --image or --embeddings-in, one of them")
			return errUsage
		}
		return imageLogits(&mf, &vf, image, embIn, prompt, mode, asJSON, top, stdout, stderr)
	}
	if idsFlag == "" {
		fmt.Fprintln(stderr, "trit logits: --ids (or --image / --embeddings-in) is required")
		return errUsage
	}
	var ids []int
	for _, s := range strings.Split(idsFlag, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--ids: %q is not an integer", s)
		}
		ids = append(ids, v)
	}
	l, err := mf.load(stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	d, err := model.ComputeLogits(l.eng.Model, ids, mode)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(d)
	}
	for i, lg := range d.Logits {
		fmt.Fprintf(stdout, "pos %d id %d:", i, ids[i])
		for _, j := range topK(lg, top) {
			fmt.Fprintf(stdout, " %d(%s)=%.4f", j, strconv.Quote(l.eng.Tok.Token(j)), lg[j])
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// imageLogits computes the logits of a prompt holding one image and prints
// them in the layout of ../shared/testdata/reference-vision.
func imageLogits(mf *modelFlags, vf *visionFlags, image, embIn, prompt, mode string, asJSON bool, top int, stdout, stderr io.Writer) error {
	var img *vision.Image
	if embIn != "" {
		b, err := os.ReadFile(embIn)
		if err != nil {
			return err
		}
		var ref vision.Dump
		if err := json.Unmarshal(b, &ref); err != nil {
			return fmt.Errorf("--embeddings-in %s: %w", embIn, err)
		}
		e, err := ref.Rows()
		if err != nil {
			return fmt.Errorf("--embeddings-in %s: %w", embIn, err)
		}
		img = &vision.Image{Embeddings: e}
	}
	l, err := mf.load(stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	var imgW, imgH int
	if image != "" {
		lz, err := vf.lazy(mf.threads, stderr)
		if err != nil {
			return err
		}
		if lz == nil {
			return errNoVision
		}
		defer lz.Close()
		imgs, err := vf.encodeFiles(lz, []string{image}, stderr)
		if err != nil {
			return err
		}
		img = imgs[0]
		data, _ := vf.readImage(image)
		if src, err := picture.Decode(data, picture.Limits{}); err == nil {
			imgW, imgH = src.W, src.H
		}
	}
	if strings.Count(prompt, vision.Marker) > 1 {
		return fmt.Errorf("--prompt: one %s marker at most (one image)", vision.Marker)
	}
	if !strings.Contains(prompt, vision.Marker) {
		prompt = vision.Marker + prompt
	}
	seq, err := vision.BuildSequence(l.eng.Tok, prompt, []*vision.Image{img}, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
	if err != nil {
		return err
	}
	logits, err := seq.Logits(l.eng.Model, mode)
	if err != nil {
		return err
	}
	before, after, _ := strings.Cut(prompt, vision.Marker)
	d := seq.Dump(img, logits)
	d.Image, d.ImageWidth, d.ImageHeight = filepath.Base(image), imgW, imgH
	d.Settings = map[string]any{"threads": mf.threads, "mode": mode, "kv_type": strings.ToLower(mf.cacheK.String()), "embd_in": embIn != ""}
	d.Prompt = vision.Prompt{Before: before, After: after}
	if asJSON {
		return json.NewEncoder(stdout).Encode(d)
	}
	for i, lg := range d.Logits {
		e := d.LogitsStart + i
		fmt.Fprintf(stdout, "element %d id %d pos %v:", e, d.Tokens[e], d.Positions[e])
		for _, j := range topK(lg, top) {
			fmt.Fprintf(stdout, " %d(%s)=%.4f", j, strconv.Quote(l.eng.Tok.Token(j)), lg[j])
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// topK returns the indices of the k largest values, largest first.
func topK(x []float32, k int) []int {
	var idx []int
	for i := range x {
		j := len(idx)
		for j > 0 && x[idx[j-1]] < x[i] {
			j--
		}
		if j < k {
			idx = append(idx, 0)
			copy(idx[j+1:], idx[j:])
			idx[j] = i
			if len(idx) > k {
				idx = idx[:k]
			}
		}
	}
	return idx
}
