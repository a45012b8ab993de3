package kernels

import "trit/quant"

// tritLayout describes how the SIMD tiers walk a TQ1_0-style trit pack.
// The packed bytes (stage A, stage B, then the qh stage) are loaded as one
// vector of lanes bytes; multiplying that vector by 3 five times yields
// trit level n = 0..4 of every byte at once. Lane l of level n holds one
// element of the block (or nothing), so the activations are gathered into
// that order ("slots") and quantized in 32-slot blocks; unused slots are 0.
type tritLayout struct {
	be     int    // elements per weight block
	widths [3]int // bytes in stages A, B and qh
	lanes  int    // bytes loaded per level
	levels int    // levels in the activation layout (PTQ1_0 pads 5 to 6 for pairs)
	slots  []int  // slot → element, −1 for padding; one weight block
}

func newTritLayout(be int, widths [3]int, lanes, levels int) *tritLayout {
	l := &tritLayout{be: be, widths: widths, lanes: lanes, levels: levels}
	wa, wb, wc := widths[0], widths[1], widths[2]
	l.slots = make([]int, lanes*levels)
	for s := range l.slots {
		n, lane := s/lanes, s%lanes
		e := -1
		switch {
		case n >= 5:
		case lane < wa:
			e = wa*n + lane
		case lane < wa+wb:
			e = 5*wa + wb*n + lane - wa
		case lane < wa+wb+wc && n < 4:
			e = 5*wa + 5*wb + wc*n + lane - wa - wb
		}
		l.slots[s] = e
	}
	return l
}

// The layouts: PTQ1_0 loads 26 bytes into 32 lanes (levels paired in a ZMM,
// so six levels with the last empty); TQ1_0 loads 52 bytes into 64 lanes.
var (
	layoutPTQ1_0 = newTritLayout(128, [3]int{16, 8, 2}, 32, 6)
	layoutTQ1_0  = newTritLayout(256, [3]int{32, 16, 4}, 64, 5)
)

// tritIndex numbers the layouts inside Acts.
func tritIndex(f *quant.Format) int {
	if f == quant.TQ1_0 {
		return 1
	}
	return 0
}

var tritLayouts = [2]*tritLayout{layoutPTQ1_0, layoutTQ1_0}

// tritActs is one row set of activations in a trit layout: int8 slots and
// the per-32-slot correction and scale lanes (see int8Acts).
type tritActs struct {
	ok     bool
	stride int // bytes per row in q, sz and ds (padded by simdPad)
	q      []int8
	d      []float32 // per 32-slot block, for tests
	sz     []int32
	ds     []float32
}

// prepareTrit builds layout k of a, once per Quantize. PTQ1_0 quantizes
// each 32-slot block as Q8_0 from the float copy; TQ1_0 gathers the Q8_K
// values of its 256-element block (llama.cpp's pairing), so its slot blocks
// share that block's scale, and the whole block's correction sits in the
// first lane of its first slot block.
func (a *Acts) prepareTrit(p *Pool, k int) *tritActs {
	t := &a.trit[k]
	if t.ok {
		return t
	}
	var qK *int8Acts
	if k == tritIndex(quant.TQ1_0) {
		qK = a.prepare(p, actQ8_K)
	}
	l := tritLayouts[k]
	per := len(l.slots)       // slots per weight block
	nw := a.n * a.cols / l.be // weight blocks over all rows
	rw := a.cols / l.be       // weight blocks per row
	t.stride = rw*per + simdPad
	t.q = grow(t.q, a.n*t.stride)
	t.d = grow(t.d, nw*per/qk)
	t.sz = grow(t.sz, a.n*t.stride/4)
	t.ds = grow(t.ds, a.n*t.stride/4)
	p.forGrain(nw, 16, func(lo, hi int) {
		var x [qk]float32
		for wb := lo; wb < hi; wb++ {
			e0 := wb * l.be // first element of the weight block
			for b := range per / qk {
				k := wb*per/qk + b                       // block number, unpadded
				off := wb/rw*t.stride + wb%rw*per + b*qk // slot offset, padded
				q := t.q[off : off+qk]
				var d float32
				var s int32
				if qK != nil {
					d = qK.d[e0/qk]
					for j, e := range l.slots[b*qk : (b+1)*qk] {
						q[j] = 0
						if e >= 0 {
							q[j] = qK.q[e0+e]
						}
						s += int32(q[j])
					}
				} else {
					for j, e := range l.slots[b*qk : (b+1)*qk] {
						x[j] = 0
						if e >= 0 {
							x[j] = a.x[e0+e]
						}
					}
					d, s = quantizeBlock(q, x[:])
				}
				t.d[k] = d
				sz, ds := t.sz[off/4:off/4+8], t.ds[off/4:off/4+8]
				for i := range 8 {
					sz[i], ds[i] = 0, d
				}
				if qK == nil {
					sz[0] = -s
					continue
				}
				// One scale for the whole weight block: the block's
				// correction goes to its first lane, so a kernel may
				// sum all levels in one int32 vector started from the
				// first level's sz lanes (the others are zero).
				head := wb/rw*t.stride/4 + wb%rw*per/4
				t.sz[head] -= s
			}
		}
	})
	t.ok = true
	return t
}
