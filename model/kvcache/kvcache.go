// Package kvcache holds the attention caches of sequences: the keys and
// values of every position of every attention layer, stored in a typed
// element format (f32, f16, q8_0, q4_0) in fixed-size pages that are
// allocated as a sequence grows, drawn from a shared byte budget, and
// reference-counted so that forks (prefix sharing, speculation) share them
// copy-on-write.
//
// A page holds PageSize consecutive positions of one layer, laid out head
// by head: the rows of one KV head are contiguous, so attention over one
// head streams its keys and values in long sequential runs. A row is
// headDim elements in the element format's blocks (ggml's layouts).
package kvcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"trit/quant"
)

// PageSize is the number of positions a page holds. Attention splits its
// work along positions at page boundaries, so this is also the grain of a
// decode step's parallelism over positions.
const PageSize = 256

var (
	// ErrBudget is returned when the shared budget has no room for the
	// pages a sequence needs.
	ErrBudget = errors.New("kvcache: KV budget exhausted")
	// ErrFull is returned when a sequence would grow past its limit.
	ErrFull = errors.New("kvcache: sequence limit reached")
)

// Types are the element formats a cache can store.
var Types = []*quant.Format{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0}

// ParseType returns the element format named s (llama.cpp's cache type
// names: f32, f16, q8_0, q4_0; case does not matter). "" means f16.
func ParseType(s string) (*quant.Format, error) {
	if s == "" {
		return quant.F16, nil
	}
	for _, f := range Types {
		if strings.EqualFold(f.Name, s) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("kvcache: cache type %q is not supported (f32, f16, q8_0, q4_0)", s)
}

// Quantized reports whether f is a block-quantized element type.
func Quantized(f *quant.Format) bool { return f == quant.Q8_0 || f == quant.Q4_0 }

// Config is the shape of the caches of one model.
type Config struct {
	Layers  int // attention layers
	KVHeads int
	HeadDim int
	K, V    *quant.Format // element formats; nil means f16
	// Rotate applies the Walsh–Hadamard rotation of llama.cpp to a
	// quantized K (and Q) or V before they are stored (see Rotation).
	Rotate bool
	// Budget, if set, is where pages are drawn from; nil means unbounded.
	Budget *Budget
}

// check validates the configuration and fills in the defaults.
func (c *Config) check() error {
	if c.K == nil {
		c.K = quant.F16
	}
	if c.V == nil {
		c.V = quant.F16
	}
	if c.Layers < 0 || c.KVHeads <= 0 || c.HeadDim <= 0 {
		return fmt.Errorf("kvcache: bad shape: %d layers, %d kv heads, head dim %d", c.Layers, c.KVHeads, c.HeadDim)
	}
	for _, f := range []*quant.Format{c.K, c.V} {
		if !supported(f) {
			return fmt.Errorf("kvcache: cache type %v is not supported", f)
		}
		if c.HeadDim%f.BlockElems != 0 {
			return fmt.Errorf("kvcache: head dim %d is not a multiple of %v's block of %d", c.HeadDim, f, f.BlockElems)
		}
	}
	return nil
}

func supported(f *quant.Format) bool {
	for _, t := range Types {
		if t == f {
			return true
		}
	}
	return false
}

// RowBytes returns the bytes of one head's row of format f.
func (c *Config) RowBytes(f *quant.Format) int { return c.HeadDim / f.BlockElems * f.BlockBytes }

// pageBytes returns the bytes of one page of K plus V.
func (c *Config) pageBytes() int {
	return PageSize * c.KVHeads * (c.RowBytes(c.K) + c.RowBytes(c.V))
}

// TokenBytes returns the bytes one position takes in all layers.
func (c *Config) TokenBytes() int64 {
	return int64(c.Layers) * int64(c.KVHeads) * int64(c.RowBytes(c.K)+c.RowBytes(c.V))
}

// Budget is a byte budget shared by the caches of many sequences. It keeps
// released pages for reuse, so a server at steady state allocates nothing.
type Budget struct {
	mu    sync.Mutex
	limit int64 // <= 0: unbounded
	used  int64
	free  map[int][][]byte // released page buffers by size
}

// NewBudget returns a budget of limit bytes; limit <= 0 means unbounded.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit, free: map[int][][]byte{}} }

// SetLimit changes the budget's size (<= 0: unbounded). Pages already held
// stay; growth beyond the new limit fails.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = limit
}

// Limit returns the budget's size in bytes (0: unbounded).
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.limit, 0)
}

// Used returns the bytes of pages held by live sequences.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// take returns a zeroed page buffer of n bytes, or nil when the budget has
// no room.
func (b *Budget) take(n int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.used+int64(n) > b.limit {
		return nil
	}
	b.used += int64(n)
	if l := b.free[n]; len(l) > 0 {
		p := l[len(l)-1]
		b.free[n] = l[:len(l)-1]
		return p
	}
	return make([]byte, n)
}

// give returns a page buffer to the budget.
func (b *Budget) give(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= int64(len(p))
	// Keep a bounded number of spare buffers: enough for a sequence's
	// next growth, not a second copy of a whole released context.
	if len(b.free[len(p)]) < 64 {
		b.free[len(p)] = append(b.free[len(p)], p)
	}
}

// page is PageSize positions of one layer: K rows then V rows, each head
// by head. refs counts the caches whose page tables hold it.
type page struct {
	refs atomic.Int32
	buf  []byte
}

// Cache is the attention cache of one sequence, all layers.
type Cache struct {
	cfg    *Config
	budget *Budget
	limit  int       // most positions the sequence may hold
	n      int       // positions held
	pages  [][]*page // pages[layer][i] holds positions [i·PageSize, (i+1)·PageSize)
	kRow   int       // bytes of a K row of one head
	vRow   int
}

// New returns an empty cache able to grow to limit positions.
func New(cfg Config, limit int) (*Cache, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("kvcache: limit %d positions", limit)
	}
	b := cfg.Budget
	if b == nil {
		b = NewBudget(0)
	}
	c := &Cache{cfg: &cfg, budget: b, limit: limit, pages: make([][]*page, cfg.Layers),
		kRow: cfg.RowBytes(cfg.K), vRow: cfg.RowBytes(cfg.V)}
	return c, nil
}

// Config returns the cache's configuration.
func (c *Cache) Config() *Config { return c.cfg }

// Len returns the number of positions the cache holds.
func (c *Cache) Len() int { return c.n }

// Limit returns the most positions the cache may hold.
func (c *Cache) Limit() int { return c.limit }

// Bytes returns the bytes of the pages the cache holds (shared pages
// counted in full).
func (c *Cache) Bytes() int64 {
	var n int64
	for _, l := range c.pages {
		n += int64(len(l)) * int64(c.cfg.pageBytes())
	}
	return n
}

// Reserve makes room for positions up to n (exclusive): it allocates the
// pages they need and unshares the page that the next write lands in, so
// that Store cannot fail. It fails with ErrFull past the limit and with
// ErrBudget when the budget is exhausted; then nothing is held beyond what
// was held before... except the pages already taken, which Truncate
// releases.
func (c *Cache) Reserve(n int) error {
	if n > c.limit {
		return fmt.Errorf("%w: %d positions, limit %d", ErrFull, n, c.limit)
	}
	need := (n + PageSize - 1) / PageSize
	size := c.cfg.pageBytes()
	for li := range c.pages {
		l := c.pages[li]
		// The page holding position c.n is written next: copy it if a
		// fork shares it.
		if i := c.n / PageSize; c.n < n && i < len(l) && l[i].refs.Load() > 1 {
			buf := c.budget.take(size)
			if buf == nil {
				return fmt.Errorf("%w: %d of %d bytes in use", ErrBudget, c.budget.Used(), c.budget.Limit())
			}
			copy(buf, l[i].buf)
			c.release(l[i])
			p := &page{buf: buf}
			p.refs.Store(1)
			l[i] = p
		}
		for len(l) < need {
			buf := c.budget.take(size)
			if buf == nil {
				c.pages[li] = l
				return fmt.Errorf("%w: %d of %d bytes in use", ErrBudget, c.budget.Used(), c.budget.Limit())
			}
			p := &page{buf: buf}
			p.refs.Store(1)
			l = append(l, p)
		}
		c.pages[li] = l
	}
	return nil
}

func (c *Cache) release(p *page) {
	if p.refs.Add(-1) == 0 {
		c.budget.give(p.buf)
		p.buf = nil
	}
}

// Truncate drops every position from n on (n ≤ Len) and releases the
// pages no position uses any more.
func (c *Cache) Truncate(n int) {
	if n < 0 || n > c.n {
		panic(fmt.Sprintf("kvcache: Truncate(%d) of %d positions", n, c.n))
	}
	c.n = n
	keep := (n + PageSize - 1) / PageSize
	for li, l := range c.pages {
		for _, p := range l[keep:] {
			c.release(p)
		}
		clear(l[keep:])
		c.pages[li] = l[:keep]
	}
}

// Free releases every page; the cache is then empty.
func (c *Cache) Free() { c.Truncate(0) }

// Fork returns a cache holding the same positions that shares every page
// with c; either one copies a shared page before writing into it.
func (c *Cache) Fork() *Cache {
	f := *c
	f.pages = make([][]*page, len(c.pages))
	for li, l := range c.pages {
		for _, p := range l {
			p.refs.Add(1)
		}
		f.pages[li] = append([]*page(nil), l...)
	}
	return &f
}

// Advance records that positions up to n (exclusive) are stored in every
// layer. Reserve(n) must have succeeded.
func (c *Cache) Advance(n int) {
	if n < c.n || n > c.limit || c.cfg.Layers > 0 && (n+PageSize-1)/PageSize > len(c.pages[0]) {
		panic(fmt.Sprintf("kvcache: Advance(%d) with %d positions held", n, c.n))
	}
	c.n = n
}

// Transposed reports whether K is stored dimension by dimension (the float
// types): element i of position j of a page's head at (i·PageSize + j).
// Attention then takes the scores of 16 keys per vector instruction, each
// key's dot product accumulated in one fixed order whatever the number of
// keys and query rows. Block-quantized keys keep their rows (their blocks
// run along the head dimension).
func (c *Config) Transposed() bool { return !Quantized(c.K) }

// head returns the K and V regions of head h in the page of layer l
// holding position pos.
func (c *Cache) head(l, h, pos int) (k, v []byte) {
	p := c.pages[l][pos/PageSize].buf
	kb := h * PageSize * c.kRow
	vb := c.cfg.KVHeads*PageSize*c.kRow + h*PageSize*c.vRow
	return p[kb : kb+PageSize*c.kRow], p[vb : vb+PageSize*c.vRow]
}

// putRows writes the encoded K and V rows of position pos of head h.
func (c *Cache) putRows(l, h, pos int, k, v []byte) {
	kh, vh := c.head(l, h, pos)
	j := pos % PageSize
	copy(vh[j*c.vRow:(j+1)*c.vRow], v)
	if !c.cfg.Transposed() {
		copy(kh[j*c.kRow:(j+1)*c.kRow], k)
		return
	}
	eb := c.cfg.K.BlockBytes
	for i := range c.cfg.HeadDim {
		copy(kh[(i*PageSize+j)*eb:(i*PageSize+j+1)*eb], k[i*eb:(i+1)*eb])
	}
}

// KeyRow decodes the key of position pos of head h of layer l into dst
// (HeadDim values).
func (c *Cache) KeyRow(l, h, pos int, dst []float32) {
	kh, _ := c.head(l, h, pos)
	j := pos % PageSize
	if !c.cfg.Transposed() {
		Decode(c.cfg.K, dst, kh[j*c.kRow:(j+1)*c.kRow])
		return
	}
	eb := c.cfg.K.BlockBytes
	var one [1]float32
	for i := range dst[:c.cfg.HeadDim] {
		Decode(c.cfg.K, one[:], kh[(i*PageSize+j)*eb:(i*PageSize+j+1)*eb])
		dst[i] = one[0]
	}
}

// ValueRow decodes the value of position pos of head h of layer l into dst.
func (c *Cache) ValueRow(l, h, pos int, dst []float32) {
	_, vh := c.head(l, h, pos)
	j := pos % PageSize
	Decode(c.cfg.V, dst, vh[j*c.vRow:(j+1)*c.vRow])
}

// Open prepares b for the positions [p0, p1) of head h of layer l, which
// must lie within one page and start at its first position; rows is the
// number of query rows the block will serve (see Block.Open).
func (c *Cache) Open(b *Block, l, h, p0, p1, rows int) {
	if p0%PageSize != 0 || p1 <= p0 || p1-p0 > PageSize {
		panic(fmt.Sprintf("kvcache: Open [%d, %d) is not the start of one page", p0, p1))
	}
	kh, vh := c.head(l, h, p0)
	b.open(c.cfg, kh, vh, p1-p0, rows)
}

// FillSynthetic grows the cache to n positions holding deterministic
// values instead of a model's keys and values, without running the model:
// the speed and memory of attention do not depend on the values, so a
// benchmark can measure depths that a small machine cannot prefill. The
// rows are a few random ones (standard normal, seeded), encoded once and
// copied to every position.
func (c *Cache) FillSynthetic(n int, seed uint64) error {
	if err := c.Reserve(n); err != nil {
		return err
	}
	const distinct = 61
	cfg := c.cfg
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	x := make([]float32, cfg.HeadDim)
	kRows := make([]byte, distinct*c.kRow)
	vRows := make([]byte, distinct*c.vRow)
	for i := range distinct {
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		encode(cfg.K, kRows[i*c.kRow:(i+1)*c.kRow], x)
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		encode(cfg.V, vRows[i*c.vRow:(i+1)*c.vRow], x)
	}
	for l := range cfg.Layers {
		for pos := c.n; pos < n; pos++ {
			for h := range cfg.KVHeads {
				i := (pos*7 + h*13 + l) % distinct
				c.putRows(l, h, pos, kRows[i*c.kRow:(i+1)*c.kRow], vRows[i*c.vRow:(i+1)*c.vRow])
			}
		}
	}
	c.n = n
	return nil
}
