package kernels

import (
	"math"

	"trit/half"
	"trit/quant"
)

// tritLayout describes how the SIMD tiers walk a TQ1_0-style trit pack.
// The packed bytes (stage A, stage B, then the qh stage) are loaded as one
// vector of lanes bytes; multiplying that vector by 3 five times yields
// trit level n = 0..4 of every byte at once. Lane l of level n holds one
// element of the block (or nothing), so the activations are gathered into
// that order ("slots"); unused slots are 0.
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

// PTQ1_0 quantizes its activations in "lane groups": the elements of the
// four packed bytes of one int32 lane (bytes 4j..4j+3 of a block) at every
// trit level, 20 values (8 for the lane of the two qh bytes), each group
// as one Q8_0 block. A kernel may then add all five levels of a lane in
// one int32 before it applies the lane's scale, where a group of 32 slots
// of one level (as TQ1_0's Q8_K values allow) would need one float
// epilogue per level.
const ptq1Groups = 7

// groupSlot is one element of a lane group: its element, slot and place
// in the pair layout (within the block's part of each level, 64 apart).
type groupSlot struct{ e, s, pos int }

// ptq1GroupSlots lists each group's elements.
var ptq1GroupSlots = func() (g [ptq1Groups][]groupSlot) {
	l := layoutPTQ1_0
	for s, e := range l.slots {
		if e >= 0 {
			n, m := s/l.lanes, s%l.lanes
			g[m/4] = append(g[m/4], groupSlot{e, s, 64*n + m})
		}
	}
	return g
}()

// The pair layout of the AVX-512 PTQ1_0 kernel: two weight blocks (56
// bytes, scales included) fill one ZMM, block h in bytes 28h..28h+27, so
// their int32 lanes are the seven lane groups of each block; lanes 14 and
// 15 are empty. Per pair it keeps five levels of 64 int8 slots and, per
// lane, 256·Σq of the group (the correction, scaled as the kernel's sums)
// and the group's scale.
const (
	pairSlots = 5 * 64
	pairLanes = 16
)

// tritActs is one row set of activations in a trit layout: int8 slots,
// the per-lane correction and scale (see int8Acts), and what the AVX-512
// kernels read besides: for PTQ1_0 the pair layout, for TQ1_0 (rows of
// cols/256 blocks in pc and pds) each block's 256·Σq and scale.
type tritActs struct {
	ok     bool
	stride int // bytes per row in q, and in sz and ds ×4 (padded by simdPad)
	q      []int8
	sz     []int32
	ds     []float32 // the scale of each lane's four slots

	pstride int // slots per row in pq; pc and pds hold pstride/pairSlots·pairLanes per row
	pq      []int8
	pc      []int32
	pds     []float32
}

// prepareTrit builds layout k of a, once per Quantize.
func (a *Acts) prepareTrit(p *Pool, k int) *tritActs {
	t := &a.trit[k]
	if t.ok {
		return t
	}
	l := tritLayouts[k]
	per := len(l.slots) // slots per weight block
	t.stride = a.cols/l.be*per + simdPad
	t.q = grow(t.q, a.n*t.stride)
	t.sz = grow(t.sz, a.n*t.stride/4)
	t.ds = grow(t.ds, a.n*t.stride/4)
	if k == tritIndex(quant.TQ1_0) {
		a.prepareTQ1(p, t)
	} else {
		a.preparePTQ1(p, t)
	}
	t.ok = true
	return t
}

// prepareTQ1 gathers the Q8_K values of each 256-element block (llama.cpp's
// pairing), so all its slots share that block's scale, and puts the whole
// block's correction into the first lane of its first 32 slots; pc and pds
// keep 256× the correction and the scale once per block.
func (a *Acts) prepareTQ1(p *Pool, t *tritActs) {
	qK := a.prepare(p, actQ8_K)
	l := layoutTQ1_0
	per := len(l.slots)
	rw := a.cols / l.be
	t.pc = grow(t.pc, a.n*rw)
	t.pds = grow(t.pds, a.n*rw)
	p.forGrain(a.n*rw, 16, func(lo, hi int) {
		for wb := lo; wb < hi; wb++ {
			e0 := wb * l.be                   // first element of the weight block
			off := wb/rw*t.stride + wb%rw*per // slot offset, padded
			d := qK.d[e0/qk]
			q := t.q[off : off+per]
			clear(q)
			for _, r := range tq1Runs {
				copy(q[r.s:r.s+r.n], qK.q[e0+r.e:])
			}
			var s int32
			for _, v := range qK.s[e0/qk : (e0+l.be)/qk] {
				s += v
			}
			sz, ds := t.sz[off/4:(off+per)/4], t.ds[off/4:(off+per)/4]
			for i := range sz {
				sz[i], ds[i] = 0, d
			}
			sz[0] = -s
			t.pc[wb], t.pds[wb] = 256*s, d
		}
	})
}

// slotRun is n slots from s on holding n consecutive elements from e on.
type slotRun struct{ s, e, n int }

// tq1Runs lists TQ1_0's slots as runs of consecutive elements.
var tq1Runs = func() (runs []slotRun) {
	for s, e := range layoutTQ1_0.slots {
		if e < 0 {
			continue
		}
		if k := len(runs) - 1; k >= 0 && runs[k].s+runs[k].n == s && runs[k].e+runs[k].n == e {
			runs[k].n++
			continue
		}
		runs = append(runs, slotRun{s, e, 1})
	}
	return runs
}()

// preparePTQ1 quantizes the lane groups of every PTQ1_0 block and stores
// them in the slot layout (per level and lane: the group's scale, and its
// correction at level 0) and in the pair layout.
func (a *Acts) preparePTQ1(p *Pool, t *tritActs) {
	l := layoutPTQ1_0
	per := len(l.slots)
	rw := a.cols / l.be
	pairs := (rw + 1) / 2
	t.pstride = pairs * pairSlots
	t.pq = grow(t.pq, a.n*t.pstride)
	t.pc = grow(t.pc, a.n*pairs*pairLanes)
	t.pds = grow(t.pds, a.n*pairs*pairLanes)
	p.forGrain(a.n*rw, 16, func(lo, hi int) {
		for wb := lo; wb < hi; wb++ {
			e0 := wb * l.be
			i, b := wb/rw, wb%rw
			off := i*t.stride + b*per
			clear(t.q[off : off+per])
			clear(t.sz[off/4 : (off+per)/4])
			clear(t.ds[off/4 : (off+per)/4])
			// The block's part of its pair: 28 slots per level and 7
			// lanes; the first block of a pair also clears the empty
			// lanes, and the other block's part when it has none.
			h := b % 2
			pq := t.pq[i*t.pstride+b/2*pairSlots : i*t.pstride+(b/2+1)*pairSlots]
			lanes := (i*pairs + b/2) * pairLanes
			pc, pds := t.pc[lanes:lanes+pairLanes], t.pds[lanes:lanes+pairLanes]
			part := 28
			if h == 0 && b == rw-1 {
				part = 64
			}
			for n := range 5 {
				clear(pq[64*n+28*h : 64*n+28*h+part])
			}
			clear(pc[7*h : 7*h+part/4])
			clear(pds[7*h : 7*h+part/4])
			if h == 0 {
				for n := range 5 {
					clear(pq[64*n+56 : 64*n+64])
				}
				clear(pc[14:])
				clear(pds[14:])
			}
			for j, g := range ptq1GroupSlots {
				// quantizeBlock for the group's values, without
				// gathering them first.
				x := a.x[e0 : e0+l.be]
				var amax float32
				for _, gs := range g {
					if v := float32(math.Abs(float64(x[gs.e]))); !(amax > v) {
						amax = v
					}
				}
				d := amax / 127
				var id float32
				if d != 0 {
					id = 1 / d
				}
				d = half.ToFloat32(half.FromFloat32(d))
				var sum int32
				for _, gs := range g {
					r := int8(roundHalfAway(x[gs.e] * id))
					t.q[off+gs.s] = r
					pq[gs.pos+28*h] = r
					sum += int32(r)
				}
				for n := range 5 {
					t.ds[(off+n*l.lanes)/4+j] = d
				}
				t.sz[off/4+j] = -sum
				pc[7*h+j], pds[7*h+j] = 256*sum, d
			}
		}
	})
}
