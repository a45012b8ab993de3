package perplexity

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"trit/logprob"
)

// The base-distribution file (`--save-logits`, read by `--kl-base`), version
// 1. All integers are little-endian; docs/quality.md describes it too.
//
//	header (32 bytes):
//	  [8]byte  magic "tritlogp"
//	  uint32   version (1)
//	  uint32   n_vocab
//	  uint32   n_ctx     tokens per chunk
//	  uint32   n_chunks
//	  uint32   top_k     entries kept per position, 1 ≤ top_k ≤ n_vocab
//	  int32    bos       token put at each chunk's first position, −1 for none
//	tokens: n_chunks × n_ctx uint32, the evaluated text as tokenized
//	uint32   CRC-32 (IEEE) of header and tokens
//	per chunk, for each of its n_ctx − 1 − n_ctx/2 scored positions:
//	  float32  log-probability of the next token
//	  top_k × uint32  token ids, most likely first (lower id first on ties)
//	  top_k × float32 their log-probabilities
//	then uint32 CRC-32 of the chunk's records.
//
// The file's size follows from the header, so a reader checks it before it
// allocates anything the header sizes. With top_k = n_vocab the file holds
// whole distributions and KL is exact; with fewer, the mass outside the
// top_k is one bucket (see KL).

const (
	fileMagic   = "tritlogp"
	fileVersion = 1
	headerSize  = 32
	// Limits that keep the arithmetic of the size check far from overflow;
	// both are far above any real model or context.
	maxVocab = 1 << 26
	maxCtx   = 1 << 24
	// MinCtx is the smallest chunk with a scored position.
	MinCtx = 3
)

// Header describes a base-distribution file.
type Header struct {
	Vocab  int
	Ctx    int
	Chunks int
	TopK   int
	BOS    int   // −1: none
	Tokens []int // Chunks × Ctx token ids
}

// Scored is the number of positions scored per chunk of ctx tokens: the
// second half, less the last position (it has no next token).
func Scored(ctx int) int { return ctx - 1 - ctx/2 }

// ErrFormat is wrapped by every error about a malformed base file.
var ErrFormat = errors.New("perplexity: malformed logits file")

// FormatError locates a problem in a base file.
type FormatError struct {
	Path   string
	Offset int64 // byte offset of the problem, or −1
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("perplexity: %s: at byte %d: %s", e.Path, e.Offset, e.Msg)
	}
	return fmt.Sprintf("perplexity: %s: %s", e.Path, e.Msg)
}

func (e *FormatError) Unwrap() error { return ErrFormat }

// Record is the base distribution at one scored position.
type Record struct {
	LogProb float32         // log-probability of the next token
	Top     []logprob.Token // the TopK most likely tokens, best first
}

func (h *Header) check() error {
	switch {
	case h.Vocab < 2 || h.Vocab > maxVocab:
		return fmt.Errorf("vocabulary of %d tokens (want 2…%d)", h.Vocab, maxVocab)
	case h.Ctx < MinCtx || h.Ctx > maxCtx:
		return fmt.Errorf("context of %d tokens (want %d…%d)", h.Ctx, MinCtx, maxCtx)
	case h.Chunks < 1:
		return fmt.Errorf("%d chunks", h.Chunks)
	case h.TopK < 1 || h.TopK > h.Vocab:
		return fmt.Errorf("top_k %d (want 1…%d)", h.TopK, h.Vocab)
	case h.BOS < -1 || h.BOS >= h.Vocab:
		return fmt.Errorf("bos token %d outside the vocabulary of %d", h.BOS, h.Vocab)
	}
	return nil
}

// chunkSize is the bytes of one chunk's records and checksum; at most
// 2⁵⁴ within the header limits.
func (h *Header) chunkSize() int64 {
	return int64(Scored(h.Ctx))*int64(4+8*h.TopK) + 4
}

// size is the exact file size the header implies.
func (h *Header) size() int64 {
	return headerSize + 4*int64(h.Chunks)*int64(h.Ctx) + 4 + int64(h.Chunks)*h.chunkSize()
}

// Writer writes a base file to a temporary name beside the target and
// renames it into place on Close, so a failed or interrupted run never
// leaves a truncated file under the final name.
type Writer struct {
	h       Header
	path    string
	f       *os.File
	w       *bufio.Writer
	crc     hash.Hash32
	written int
	buf     []byte
	err     error
}

// Create starts a base file at path.
func Create(path string, h Header) (*Writer, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("perplexity: %w", err)
	}
	if len(h.Tokens) != h.Chunks*h.Ctx {
		return nil, fmt.Errorf("perplexity: %d tokens for %d chunks of %d", len(h.Tokens), h.Chunks, h.Ctx)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private; the result is an ordinary one.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w := &Writer{h: h, path: path, f: f, w: bufio.NewWriterSize(f, 1<<20), crc: crc32.NewIEEE()}
	b := make([]byte, 0, headerSize+4*len(h.Tokens))
	b = append(b, fileMagic...)
	for _, v := range []uint32{fileVersion, uint32(h.Vocab), uint32(h.Ctx), uint32(h.Chunks), uint32(h.TopK), uint32(int32(h.BOS))} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, t := range h.Tokens {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	w.write(b)
	w.sum()
	return w, w.err
}

func (w *Writer) write(b []byte) {
	if w.err == nil {
		w.crc.Write(b)
		_, w.err = w.w.Write(b)
	}
}

// sum writes the running CRC and starts a new one.
func (w *Writer) sum() {
	if w.err == nil {
		_, w.err = w.w.Write(binary.LittleEndian.AppendUint32(nil, w.crc.Sum32()))
	}
	w.crc.Reset()
}

// WriteChunk appends the records of the next chunk: Scored(Ctx) of them,
// each with TopK entries.
func (w *Writer) WriteChunk(recs []Record) error {
	if w.err != nil {
		return w.err
	}
	if w.written == w.h.Chunks {
		return fmt.Errorf("perplexity: more than the %d chunks declared", w.h.Chunks)
	}
	if len(recs) != Scored(w.h.Ctx) {
		return fmt.Errorf("perplexity: chunk of %d records, want %d", len(recs), Scored(w.h.Ctx))
	}
	for _, r := range recs {
		if len(r.Top) != w.h.TopK {
			return fmt.Errorf("perplexity: record of %d entries, want %d", len(r.Top), w.h.TopK)
		}
		b := binary.LittleEndian.AppendUint32(w.buf[:0], math.Float32bits(r.LogProb))
		for _, t := range r.Top {
			b = binary.LittleEndian.AppendUint32(b, uint32(t.ID))
		}
		for _, t := range r.Top {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(t.LogProb))
		}
		w.buf = b
		w.write(b)
	}
	w.sum()
	w.written++
	return w.err
}

// Close finishes the file and renames it into place. It fails, leaving
// nothing at the path, unless every declared chunk was written.
func (w *Writer) Close() error {
	if w.f == nil {
		return w.err
	}
	err := w.err
	if err == nil && w.written != w.h.Chunks {
		err = fmt.Errorf("perplexity: %d of %d chunks written", w.written, w.h.Chunks)
	}
	if err == nil {
		err = w.w.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.f.Name())
	}
	w.f, w.err = nil, err
	return err
}

// Abort discards the file.
func (w *Writer) Abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
		w.f, w.err = nil, errors.New("perplexity: writer aborted")
	}
}

// Reader reads a base file chunk by chunk, checking each as it goes.
type Reader struct {
	Header
	name  string
	r     io.Reader
	c     io.Closer
	off   int64
	chunk int
	buf   []byte
	recs  []Record
	ids   []int
}

// Open opens the base file at path and reads its header and tokens.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(bufio.NewReaderSize(f, 1<<20), st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.c = f
	return r, nil
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// NewReader reads a base file of size bytes from r; name labels errors.
func NewReader(r io.Reader, size int64, name string) (*Reader, error) {
	rd := &Reader{name: name, r: r}
	hb := make([]byte, headerSize)
	if err := rd.read(hb); err != nil {
		return nil, err
	}
	if string(hb[:8]) != fileMagic {
		return nil, rd.errorf(0, "not a trit logits file (magic %q, want %q)", hb[:8], fileMagic)
	}
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(hb[8+4*i:]) }
	if v := u(0); v != fileVersion {
		return nil, rd.errorf(8, "format version %d; this trit reads version %d", v, fileVersion)
	}
	// Each field is bounded before the int conversion, so 32-bit platforms
	// cannot wrap.
	for i, lim := range []uint32{maxVocab, maxCtx, math.MaxInt32, maxVocab} {
		if u(i+1) > lim {
			return nil, rd.errorf(int64(12+4*i), "header field %d is %d (at most %d)", i+1, u(i+1), lim)
		}
	}
	h := Header{Vocab: int(u(1)), Ctx: int(u(2)), Chunks: int(u(3)), TopK: int(u(4)), BOS: int(int32(u(5)))}
	if err := h.check(); err != nil {
		return nil, rd.errorf(12, "%v", err)
	}
	// Bounding Chunks by the file size first keeps size() from overflowing
	// and the token allocation below the file's size.
	if chunk := h.chunkSize(); int64(h.Chunks) > size/chunk || h.Chunks > int(size/int64(h.Ctx)) {
		return nil, rd.errorf(-1, "file of %d bytes cannot hold %d chunks of %d tokens, top %d", size, h.Chunks, h.Ctx, h.TopK)
	}
	if want := h.size(); want != size {
		return nil, rd.errorf(-1, "file is %d bytes; its header (vocab %d, ctx %d, %d chunks, top %d) needs %d", size, h.Vocab, h.Ctx, h.Chunks, h.TopK, want)
	}
	crc := crc32.NewIEEE()
	crc.Write(hb)
	tb := make([]byte, 4*h.Chunks*h.Ctx)
	if err := rd.read(tb); err != nil {
		return nil, err
	}
	crc.Write(tb)
	h.Tokens = make([]int, h.Chunks*h.Ctx)
	for i := range h.Tokens {
		t := binary.LittleEndian.Uint32(tb[4*i:])
		if t >= uint32(h.Vocab) {
			return nil, rd.errorf(headerSize+4*int64(i), "token %d outside the vocabulary of %d", t, h.Vocab)
		}
		h.Tokens[i] = int(t)
	}
	if err := rd.checkCRC(crc.Sum32()); err != nil {
		return nil, err
	}
	rd.Header = h
	return rd, nil
}

func (r *Reader) errorf(off int64, format string, args ...any) error {
	return &FormatError{Path: r.name, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) read(b []byte) error {
	n, err := io.ReadFull(r.r, b)
	r.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.errorf(r.off, "file ends early")
		}
		return err
	}
	return nil
}

func (r *Reader) checkCRC(want uint32) error {
	var b [4]byte
	if err := r.read(b[:]); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return r.errorf(r.off-4, "checksum %08x, content sums to %08x (file damaged)", got, want)
	}
	return nil
}

// Next reads the next chunk's records. They stay valid until the next call.
// It returns io.EOF after the last chunk.
func (r *Reader) Next() ([]Record, error) {
	if r.chunk == r.Chunks {
		return nil, io.EOF
	}
	n, k := Scored(r.Ctx), r.TopK
	recSize := 4 + 8*k
	start := r.off
	r.buf = slices.Grow(r.buf[:0], n*recSize)[:n*recSize]
	if err := r.read(r.buf); err != nil {
		return nil, err
	}
	if err := r.checkCRC(crc32.ChecksumIEEE(r.buf)); err != nil {
		return nil, err
	}
	if r.recs == nil {
		r.recs = make([]Record, n)
		for i := range r.recs {
			r.recs[i].Top = make([]logprob.Token, k)
		}
	}
	f := func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
	for i := range r.recs {
		b := r.buf[i*recSize:]
		off := start + int64(i*recSize)
		rec := &r.recs[i]
		rec.LogProb = f(b)
		if !validLogProb(rec.LogProb) {
			return nil, r.errorf(off, "log-probability %g", rec.LogProb)
		}
		var mass float64
		r.ids = r.ids[:0]
		for j := range rec.Top {
			id := binary.LittleEndian.Uint32(b[4+4*j:])
			lp := f(b[4+4*k+4*j:])
			if id >= uint32(r.Vocab) {
				return nil, r.errorf(off, "token %d outside the vocabulary of %d", id, r.Vocab)
			}
			if !validLogProb(lp) || (j > 0 && lp > rec.Top[j-1].LogProb) {
				return nil, r.errorf(off, "entry %d: log-probability %g (entries must be ≤ 0 and best first)", j, lp)
			}
			rec.Top[j] = logprob.Token{ID: int(id), LogProb: lp}
			mass += math.Exp(float64(lp))
			r.ids = append(r.ids, int(id))
		}
		if mass > 1+1e-3 {
			return nil, r.errorf(off, "top entries hold probability %g > 1", mass)
		}
		slices.Sort(r.ids)
		for j := 1; j < len(r.ids); j++ {
			if r.ids[j] == r.ids[j-1] {
				return nil, r.errorf(off, "token %d listed twice", r.ids[j])
			}
		}
	}
	r.chunk++
	return r.recs, nil
}

// validLogProb accepts a log-probability: finite or −Inf, and at most a
// rounding error above 0.
func validLogProb(v float32) bool {
	return v == v && !math.IsInf(float64(v), 1) && v <= 1e-4
}
