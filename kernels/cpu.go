package kernels

import (
	"fmt"

	"trit/internal/cpu"
	"trit/quant"
)

// The kernel tiers, lowest first (see package cpu, which ops shares).
const (
	tierGeneric = cpu.Generic
	tierAVX2    = cpu.AVX2
	tierAVX512  = cpu.AVX512
	numTiers    = cpu.NumTiers
)

// hwTier is the best tier this CPU and build support; tier is the one in
// use (TRIT_CPU may lower it).
var (
	hwTier = cpu.HW
	tier   = cpu.Tier
)

// Tier returns the name of the kernel tier in use: "generic", "avx2" or
// "avx512".
func Tier() string { return cpu.Name(tier) }

// useTier switches the tier (tests cover every tier in one run this way)
// and returns a function that restores the previous one. It fails for a
// tier the machine lacks.
func useTier(name string) (restore func(), err error) {
	t, ok := cpu.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("kernels: unknown tier %q", name)
	}
	if t > hwTier {
		return nil, fmt.Errorf("kernels: tier %s not available (have %s)", name, cpu.Name(hwTier))
	}
	old := tier
	tier = t
	return func() { tier = old }, nil
}

// dotFn returns Σ_j W[j]·x[j] for one packed row and activation row i.
type dotFn func(w []byte, a *Acts, i int) float32

// rowsFn computes the products of weight rows lo..hi-1 with activation
// row i into dst[lo:hi], dst being that activation row's output. Every
// rowsFn gives each row the bits its format's dot gives it, whatever the
// range: a row's product never depends on which rows share the call.
type rowsFn func(dst []float32, w *Matrix, a *Acts, i, lo, hi int)

// rows4Fn computes the products of weight rows lo..hi-1 with activation
// rows i..i+3 into dst[(i+j)·w.Rows+r] (dst the whole product), each with
// the bits the format's rowsFn gives it.
type rows4Fn func(dst []float32, w *Matrix, a *Acts, i, lo, hi int)

// rows4Of is the rows4Fn that calls rows once per activation row.
func rows4Of(rows rowsFn) rows4Fn {
	return func(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
		for j := i; j < i+4; j++ {
			rows(dst[j*w.Rows:(j+1)*w.Rows], w, a, j, lo, hi)
		}
	}
}

// traits is what the products know about one format at one tier, in the
// spirit of ggml-cpu's type_traits_cpu: the activation layout its kernels
// read, the one-row kernel, the kernel that loops over weight rows (which
// also serves a few activation rows, each over a tile of weight rows that
// stays in cache) and the prefill GEMM, where the tier has one.
type traits struct {
	float bool    // float activations (F32, F16, BF16): the kernels read Acts.x
	act   actKind // the int8 quantization (llama.cpp's vec_dot_type)
	// acts builds the activation layout dot and rows read (once per
	// Quantize); nil for float activations.
	acts func(a *Acts, p *Pool)
	dot  dotFn
	rows rowsFn // nil: dot per row
	// rows4 serves four activation rows at once, each weight row read
	// and unpacked once for all four; nil: rows per activation row.
	rows4 rows4Fn
	gemm  *gemmFormat // the GEMM for n > fewRows; nil: the few-row path
}

// formatTraits holds every format's traits by tier; a tier left unset (no
// dot) falls back to the next lower one. The generic
// entries are in generic.go, the SIMD tiers in cpu_amd64.go.
var formatTraits = map[*quant.Format]*[numTiers]traits{}

// define registers tr as format f's traits at tier t.
func define(f *quant.Format, t int, tr traits) {
	ts := formatTraits[f]
	if ts == nil {
		ts = new([numTiers]traits)
		formatTraits[f] = ts
	}
	if tr.rows == nil {
		tr.rows = dotRows(tr.dot)
	}
	if tr.rows4 == nil {
		tr.rows4 = rows4Of(tr.rows)
	}
	ts[t] = tr
}

// traitsFor returns format f's traits at tier t (those of the highest
// tier ≤ t that has any), or nil for a format without kernels.
func traitsFor(f *quant.Format, t int) *traits {
	ts := formatTraits[f]
	if ts == nil {
		return nil
	}
	for ; t > tierGeneric && ts[t].dot == nil; t-- {
	}
	return &ts[t]
}

// dotRows is the rowsFn of a format whose kernels take one row per call.
func dotRows(dot dotFn) rowsFn {
	return func(dst []float32, w *Matrix, a *Acts, i, lo, hi int) {
		for r := lo; r < hi; r++ {
			dst[r] = dot(w.row(r), a, i)
		}
	}
}

// The activation layouts (traits.acts).

// natural is the int8 quantization k in natural order (Acts.prepare).
func natural(k actKind) func(a *Acts, p *Pool) {
	return func(a *Acts, p *Pool) { a.prepare(p, k) }
}

// simdLayout is quantization k's SIMD layouts (Acts.prepareSIMD).
func simdLayout(k actKind) func(a *Acts, p *Pool) {
	return func(a *Acts, p *Pool) { a.prepareSIMD(p, k) }
}

// planesLayout is plane layout l; with tail set, also the SIMD layout
// that the Q1_0 and Q2_0_g64 kernels read for a row's blocks past its last
// whole chunk.
func planesLayout(l planeLayout, tail bool) func(a *Acts, p *Pool) {
	return func(a *Acts, p *Pool) {
		a.preparePlanes(p, l)
		if tail && a.cols%planeInfo[l].chunk != 0 {
			a.prepareSIMD(p, planeInfo[l].act)
		}
	}
}

// tritLayoutOf is trit layout l (Acts.prepareTrit).
func tritLayoutOf(l *tritLayout) func(a *Acts, p *Pool) {
	return func(a *Acts, p *Pool) { a.prepareTrit(p, l) }
}
