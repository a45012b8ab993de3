// Package kernels computes matrix products straight from packed GGUF weight
// blocks. Weights are never expanded to floats in memory: the quantized
// kernels quantize the activations once per row to int8 blocks and take
// integer dot products against the packed codes, with one float
// multiply-add per activation block.
//
// Three tiers implement the integer kernels: AVX-512 (VNNI), AVX2 and
// portable Go. The best tier the CPU supports is chosen once at init; the
// environment variable TRIT_CPU=generic|avx2|avx512 forces a lower one, and
// the purego build tag compiles only the Go tier. Each format's kernels at
// each tier are described in one place (traits in cpu.go).
//
// A product of up to 16 activation rows (batched decoding, a speculative
// draft) reads the weights from memory once: each worker takes a tile of
// weight rows that stays in cache while every activation row passes over
// it, with the kernels of a single row (four rows at a time where a format
// has such a kernel). A row's result is then the same bits whether it is
// computed alone or among others, at any thread count. Larger products of
// the ternary and binary formats at the AVX-512 tier run an int8 GEMM
// instead, whose float association differs; Pool.SetBatchInvariant keeps
// them on the row kernels.
package kernels

import (
	"errors"
	"fmt"

	"trit/quant"
)

// ErrShape is returned by NewMatrix when the data does not match the shape.
var ErrShape = errors.New("kernels: data size does not match matrix shape")

// ErrFormat is returned by NewMatrix for a format the kernels do not implement.
var ErrFormat = errors.New("kernels: unsupported format")

// Matrix is a packed weight matrix with Rows output rows of Cols inputs each
// (Cols is GGUF ne[0]). Data holds Rows consecutive packed rows in Format,
// typically a zero-copy slice of a memory-mapped file.
type Matrix struct {
	Format     *quant.Format
	Rows, Cols int
	Data       []byte
}

// NewMatrix checks that data holds exactly rows packed rows of cols elements
// in format f and returns the matrix. Every kernel assumes a matrix that
// passed this check (or was built with the same invariants).
func NewMatrix(f *quant.Format, rows, cols int, data []byte) (*Matrix, error) {
	if f == nil || traitsFor(f, tierGeneric) == nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, f)
	}
	if rows < 0 || cols <= 0 || cols%f.BlockElems != 0 {
		return nil, fmt.Errorf("%w: %s %d×%d (block %d)", ErrShape, f.Name, rows, cols, f.BlockElems)
	}
	rb := int64(cols/f.BlockElems) * int64(f.BlockBytes)
	if int64(len(data)) != rb*int64(rows) {
		return nil, fmt.Errorf("%w: %s %d×%d needs %d bytes, have %d", ErrShape, f.Name, rows, cols, rb*int64(rows), len(data))
	}
	return &Matrix{Format: f, Rows: rows, Cols: cols, Data: data}, nil
}

// rowBytes is the packed size of one row.
func (w *Matrix) rowBytes() int { return w.Cols / w.Format.BlockElems * w.Format.BlockBytes }

// row returns the packed bytes of row r.
func (w *Matrix) row(r int) []byte {
	rb := w.rowBytes()
	return w.Data[r*rb : (r+1)*rb : (r+1)*rb]
}

// Row decodes row r into dst[:w.Cols] exactly (the reference decoders), as
// an embedding lookup needs.
func (w *Matrix) Row(r int, dst []float32) {
	if r < 0 || r >= w.Rows {
		panic(fmt.Sprintf("kernels: row %d out of range [0,%d)", r, w.Rows))
	}
	decodeRow(w.Format, w.row(r), dst[:w.Cols])
}

// check panics with a clear message when a call's shapes are inconsistent;
// these are programming errors in the caller, like an index out of range.
func (w *Matrix) check(dst []float32, n int) {
	if n < 0 || len(dst) < n*w.Rows {
		panic(fmt.Sprintf("kernels: dst has %d elements, need %d×%d", len(dst), n, w.Rows))
	}
	if w.Cols <= 0 || w.Cols%w.Format.BlockElems != 0 || len(w.Data) != w.rowBytes()*w.Rows {
		panic(fmt.Sprintf("kernels: %s matrix %d×%d has %d data bytes", w.Format.Name, w.Rows, w.Cols, len(w.Data)))
	}
}
