package vision

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"trit/picture"
	"trit/tokenizer"
)

// Marker stands for an image in prompt text, as in llama.cpp's libmtmd.
const Marker = "<__media__>"

// Image is an encoded image, keyed by the hash of its file's bytes.
type Image struct {
	*Embeddings
	Hash   uint64
	Pixels *Pixels
}

// EncodeImage decodes an image file, preprocesses it with budget b and runs
// the tower on it.
func (t *Tower) EncodeImage(data []byte, lim picture.Limits, b Budget) (*Image, error) {
	img, err := picture.Decode(data, lim)
	if err != nil {
		return nil, err
	}
	px, err := Preprocess(img, t.MergedPatch(), t.mean, t.std, b)
	if err != nil {
		return nil, err
	}
	e, err := t.Encode(px)
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write(data)
	fmt.Fprintf(h, "|%d|%d", b.MinTokens, b.MaxTokens)
	return &Image{Embeddings: e, Hash: h.Sum64(), Pixels: px}, nil
}

// ErrMarkers is returned when a prompt's markers and images disagree in
// number.
var ErrMarkers = errors.New("vision: image markers and images differ in number")

// BuildSequence tokenizes text, in which every Marker stands for the next
// of images, into a decoder sequence: each image goes between
// <|vision_start|> and <|vision_end|>. A text without markers gets the
// images at its start, as llama.cpp's mtmd-cli places them.
func BuildSequence(tok *tokenizer.Tokenizer, text string, images []*Image, opts tokenizer.EncodeOptions) (*Sequence, error) {
	if len(images) > 0 && !strings.Contains(text, Marker) {
		text = strings.Repeat(Marker, len(images)) + text
	}
	parts := strings.Split(text, Marker)
	if len(parts)-1 != len(images) {
		return nil, fmt.Errorf("%w: %d markers, %d images", ErrMarkers, len(parts)-1, len(images))
	}
	var start, end int
	if len(images) > 0 {
		var ok1, ok2 bool
		start, ok1 = tok.TokenID("<|vision_start|>")
		end, ok2 = tok.TokenID("<|vision_end|>")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("vision: the vocabulary has no <|vision_start|>/<|vision_end|> tokens")
		}
	}
	s := &Sequence{}
	for i, p := range parts {
		ids := tok.Encode(p, opts)
		opts.AddBOS = false
		if i > 0 {
			ids = append([]int{end}, ids...)
		}
		if i < len(images) {
			ids = append(ids, start)
		}
		s.Text(ids)
		if i < len(images) {
			if err := s.Image(images[i].Embeddings); err != nil {
				return nil, err
			}
			s.hashes = append(s.hashes, images[i].Hash)
		}
	}
	return s, nil
}

// Keys returns a key per element for prefix caching: the token id of text,
// and for image rows a negative number derived from the image's content
// hash and the row, so that sequences agree exactly where their tokens and
// images do.
func (s *Sequence) Keys() []int {
	keys := make([]int, len(s.Tokens))
	img := 0
	for i, t := range s.Tokens {
		keys[i] = t
	}
	for _, c := range s.Chunks {
		if c.Type != "image" {
			continue
		}
		var h uint64
		if img < len(s.hashes) {
			h = s.hashes[img]
		}
		img++
		for r := range c.N {
			keys[c.Start+r] = -1 - int(mix64(h+uint64(r+1)*0x9e3779b97f4a7c15)>>1)
		}
	}
	return keys
}

// mix64 is SplitMix64's finaliser: every input bit moves every output bit.
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Lazy maps a tower when the first image needs it and releases it after
// an idle time, so that serving text never pays for the tower.
type Lazy struct {
	path string
	opts Options
	idle time.Duration

	mu    sync.Mutex
	t     *Tower
	busy  int
	last  time.Time
	timer *time.Timer
	loads int
	bytes int64

	encode sync.Mutex // Encode is not safe for concurrent use
}

// NewLazy checks that path is a tower this package runs (loading it once)
// and returns a Lazy for it; idle ≤ 0 keeps the tower once loaded.
func NewLazy(path string, opts Options, idle time.Duration) (*Lazy, error) {
	t, err := Load(path, opts)
	if err != nil {
		return nil, err
	}
	bytes := t.WeightBytes()
	t.Close()
	return &Lazy{path: path, opts: opts, idle: idle, bytes: bytes}, nil
}

// Use runs fn with the tower, loading it first if it is not resident.
func (l *Lazy) Use(fn func(*Tower) error) error {
	l.mu.Lock()
	if l.t == nil {
		t, err := Load(l.path, l.opts)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.t = t
		l.loads++
	}
	t := l.t
	l.busy++
	l.mu.Unlock()

	l.encode.Lock()
	err := fn(t)
	l.encode.Unlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy--
	l.last = time.Now()
	if l.idle > 0 && l.timer == nil {
		l.timer = time.AfterFunc(l.idle, l.expire)
	}
	return err
}

// expire releases the tower if it has been idle long enough, or re-arms.
func (l *Lazy) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if l.t == nil {
		return
	}
	if wait := l.idle - time.Since(l.last); l.busy > 0 || wait > 0 {
		l.timer = time.AfterFunc(max(wait, l.idle/10), l.expire)
		return
	}
	l.t.Close()
	l.t = nil
}

// Resident returns the tower's weight bytes while it is loaded, else 0.
func (l *Lazy) Resident() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t == nil {
		return 0
	}
	return l.bytes
}

// Loads counts how often the tower has been loaded.
func (l *Lazy) Loads() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loads
}

// Close releases the tower.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.t == nil {
		return nil
	}
	err := l.t.Close()
	l.t = nil
	return err
}
