package vision

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
)

// Dump is the JSON layout of the vision references in
// ../shared/testdata/reference-vision (what llama.cpp's libmtmd computes
// for an image in a chat prompt), which `trit logits --image --json` also
// prints, so the two compare field by field.
type Dump struct {
	Format       string         `json:"format"`
	Image        string         `json:"image"`
	ImageWidth   int            `json:"image_width"`
	ImageHeight  int            `json:"image_height"`
	Settings     map[string]any `json:"settings"`
	Prompt       Prompt         `json:"prompt"`
	Preprocessed *PixelStats    `json:"preprocessed,omitempty"`
	NImageTokens int            `json:"n_image_tokens"`
	GridX        int            `json:"grid_x"`
	GridY        int            `json:"grid_y"`
	ImageNPos    int            `json:"image_n_pos"`
	NEmbd        int            `json:"n_embd"`
	Embeddings   [][]float32    `json:"embeddings"`
	Chunks       []Chunk        `json:"chunks"`
	NSeq         int            `json:"n_seq"`
	Tokens       []int          `json:"tokens"`
	Positions    [][4]int       `json:"positions"`
	NVocab       int            `json:"n_vocab"`
	LogitsStart  int            `json:"logits_start"`
	Logits       [][]float32    `json:"logits"`
	// Logits of the elements before the image and of the image rows.
	LogitsBeforeImage [][]float32 `json:"logits_before_image"`
	LogitsImage       [][]float32 `json:"logits_image"`
}

// DumpFormat is the value of Dump.Format.
const DumpFormat = "trit-vision-reference-1"

// Prompt is the text around the image marker.
type Prompt struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// Chunk is a run of text tokens or image rows in the decoder sequence.
type Chunk struct {
	Type  string `json:"type"` // "text" or "image"
	Start int    `json:"start"`
	N     int    `json:"n"`
}

// PixelStats are checksums of the normalised pixels, laid out as
// Pixels.Norm.
type PixelStats struct {
	Width       int       `json:"width"`
	Height      int       `json:"height"`
	Channels    int       `json:"channels"`
	Layout      string    `json:"layout"`
	Sum         float64   `json:"sum"`
	SumAbs      float64   `json:"sum_abs"`
	SumSq       float64   `json:"sum_sq"`
	FNV         string    `json:"fnv1a64_f32_le"` // FNV-1a 64 of the little-endian float bytes
	First       []float32 `json:"first"`
	RowSums     []float64 `json:"row_sums"`
	ChannelSums []float64 `json:"channel_sums"`
}

// Stats computes the checksums of p.
func (p *Pixels) Stats() *PixelStats {
	W, H := p.Image.W, p.Image.H
	s := &PixelStats{Width: W, Height: H, Channels: 3, Layout: "float32 [height][width][3] (RGB interleaved)",
		RowSums: make([]float64, H), ChannelSums: make([]float64, 3)}
	h := fnv.New64a()
	var b [4]byte
	for i, v := range p.Norm {
		x := float64(v)
		s.Sum += x
		s.SumAbs += math.Abs(x)
		s.SumSq += x * x
		s.RowSums[i/(3*W)] += x
		s.ChannelSums[i%3] += x
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	s.FNV = fmt.Sprintf("%016x", h.Sum64())
	s.First = p.Norm[:min(48, len(p.Norm))]
	return s
}

// Rows returns the dump's embeddings as image rows.
func (d *Dump) Rows() (*Embeddings, error) {
	n := d.GridX * d.GridY
	if d.GridX <= 0 || d.GridY <= 0 || n != len(d.Embeddings) || d.NEmbd <= 0 {
		return nil, fmt.Errorf("vision: %d embedding rows for a grid of %d×%d", len(d.Embeddings), d.GridX, d.GridY)
	}
	e := &Embeddings{GridX: d.GridX, GridY: d.GridY, Dim: d.NEmbd, Data: make([]float32, 0, n*d.NEmbd)}
	for i, r := range d.Embeddings {
		if len(r) != d.NEmbd {
			return nil, fmt.Errorf("vision: embedding row %d has %d values, n_embd is %d", i, len(r), d.NEmbd)
		}
		e.Data = append(e.Data, r...)
	}
	return e, nil
}

// Dump lays out a one-image sequence, its image and the logits after
// every element (from Logits) as the reference files do; the caller fills
// in the image name, settings and prompt.
func (s *Sequence) Dump(img *Image, logits [][]float32) *Dump {
	e := img.Embeddings
	d := &Dump{
		Format: DumpFormat, NImageTokens: e.N(), GridX: e.GridX, GridY: e.GridY,
		ImageNPos: max(e.GridX, e.GridY), NEmbd: e.Dim, Chunks: s.Chunks,
		NSeq: len(s.Tokens), Tokens: s.Tokens, Positions: s.Pos,
	}
	if img.Pixels != nil {
		d.Preprocessed = img.Pixels.Stats()
	}
	for i := range e.N() {
		d.Embeddings = append(d.Embeddings, e.Row(i))
	}
	if len(logits) > 0 {
		d.NVocab = len(logits[0])
	}
	for _, c := range s.Chunks {
		if c.Type == "image" {
			d.LogitsStart = c.Start + c.N
			d.LogitsImage = logits[c.Start:d.LogitsStart]
			d.LogitsBeforeImage = logits[:c.Start]
			break
		}
	}
	d.Logits = logits[d.LogitsStart:]
	return d
}
