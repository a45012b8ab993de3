package perplexity

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"trit/logprob"
)

// writeFile writes a small valid base file and returns its bytes.
func writeFile(t testing.TB, h Header) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.bin")
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for c := range h.Chunks {
		recs := make([]Record, Scored(h.Ctx))
		for i := range recs {
			logits := make([]float32, h.Vocab)
			for j := range logits {
				logits[j] = float32((j*7+i*3+c)%11) * 0.5
			}
			lse := logprob.LogSumExp(logits)
			recs[i] = Record{LogProb: logprob.Of(logits[1], lse), Top: logprob.Top(nil, logits, h.TopK, lse)}
		}
		if err := w.WriteChunk(recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func smallHeader() Header {
	return Header{Vocab: 10, Ctx: 6, Chunks: 2, TopK: 3, BOS: 1, Tokens: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2}}
}

func readAll(b []byte) (*Reader, [][]Record, error) {
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), "test")
	if err != nil {
		return nil, nil, err
	}
	var all [][]Record
	for {
		recs, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return r, all, nil
			}
			return r, all, err
		}
		c := make([]Record, len(recs))
		for i, rec := range recs {
			c[i] = Record{rec.LogProb, append([]logprob.Token(nil), rec.Top...)}
		}
		all = append(all, c)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	h := smallHeader()
	b := writeFile(t, h)
	if int64(len(b)) != h.size() {
		t.Fatalf("%d bytes, header implies %d", len(b), h.size())
	}
	r, recs, err := readAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Vocab != 10 || r.Ctx != 6 || r.Chunks != 2 || r.TopK != 3 || r.BOS != 1 || len(r.Tokens) != 12 || r.Tokens[9] != 0 {
		t.Errorf("header %+v", r.Header)
	}
	if len(recs) != 2 || len(recs[1]) != Scored(6) || len(recs[1][0].Top) != 3 {
		t.Fatalf("records %v", recs)
	}
	if top := recs[0][0].Top; top[0].LogProb < top[1].LogProb {
		t.Errorf("entries not best first: %v", top)
	}
}

// corrupt returns a copy of b with f applied.
func corrupt(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }

func TestFormatErrors(t *testing.T) {
	good := writeFile(t, smallHeader())
	put := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[off:], v); return b }
	}
	hdrEnd := headerSize + 4*12 + 4 // first record
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "ends early"},
		{"magic", corrupt(good, func(b []byte) []byte { b[0] = 'x'; return b }), "not a trit logits file"},
		{"version", corrupt(good, put(8, 2)), "format version 2"},
		{"huge vocabulary", corrupt(good, put(12, 1<<30)), "at most"},
		{"context too small", corrupt(good, put(16, 2)), "context of 2"},
		{"top_k above vocab", corrupt(good, put(24, 11)), "top_k 11"},
		{"chunks claimed", corrupt(good, put(20, 1<<30)), "cannot hold"},
		{"truncated", good[:len(good)-1], "needs"},
		{"extra bytes", append(append([]byte(nil), good...), 0), "needs"},
		{"header checksum", corrupt(good, func(b []byte) []byte { b[headerSize] ^= 1; return b }), "checksum"},
		{"token outside vocabulary", corrupt(good, put(headerSize, 10)), "outside the vocabulary"},
		{"record checksum", corrupt(good, func(b []byte) []byte { b[hdrEnd] ^= 1; return b }), "checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readAll(tc.b)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			var fe *FormatError
			if !errors.Is(err, ErrFormat) || !errors.As(err, &fe) {
				t.Errorf("%v is not a FormatError", err)
			}
		})
	}
}

// Records that pass the checksum but break the rules are refused too: the
// checksum is recomputed after the change.
func TestFormatBadRecords(t *testing.T) {
	good := writeFile(t, smallHeader())
	rec := headerSize + 4*12 + 4
	chunkLen := Scored(6) * (4 + 8*3)
	resum := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[rec+chunkLen:], crc32.ChecksumIEEE(b[rec:rec+chunkLen]))
		return b
	}
	f32 := func(off int, v float32) []byte {
		return corrupt(good, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v))
			return resum(b)
		})
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"NaN log-probability", f32(rec, float32(math.NaN())), "log-probability"},
		{"positive log-probability", f32(rec, 1), "log-probability"},
		{"entries out of order", f32(rec+4+12+4, 0), "best first"},
		{"id outside vocabulary", corrupt(good, func(b []byte) []byte { binary.LittleEndian.PutUint32(b[rec+4:], 99); return resum(b) }), "outside"},
		{"id twice", corrupt(good, func(b []byte) []byte { copy(b[rec+8:rec+12], b[rec+4:rec+8]); return resum(b) }), "twice"},
		{"mass above one", corrupt(good, func(b []byte) []byte {
			for j := range 3 {
				binary.LittleEndian.PutUint32(b[rec+4+12+4*j:], math.Float32bits(-0.1))
			}
			return resum(b)
		}), "probability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readAll(tc.b)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A writer that is not closed, or closed early, leaves nothing behind.
func TestWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.bin")
	w, err := Create(path, smallHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after 0 of 2 chunks: no error")
	}
	w2, _ := Create(path, smallHeader())
	w2.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	if _, err := Create(path, Header{Vocab: 10, Ctx: 6, Chunks: 1, TopK: 3, BOS: -1}); err == nil {
		t.Error("header without its tokens: no error")
	}
}

func FuzzReader(f *testing.F) {
	f.Add(writeFile(f, smallHeader()))
	f.Add(writeFile(f, Header{Vocab: 4, Ctx: 3, Chunks: 1, TopK: 4, BOS: -1, Tokens: []int{0, 1, 2}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, recs, err := readAll(b)
		if err != nil {
			return
		}
		if len(recs) != r.Chunks {
			t.Fatalf("%d chunks read, header says %d", len(recs), r.Chunks)
		}
	})
}
