package kernels

// tritLayout describes how the SIMD tiers walk a TQ1_0-style trit pack.
// The packed bytes (stage A, stage B, then the qh stage) are loaded as one
// vector of lanes bytes; multiplying that vector by 3 five times yields
// trit level n = 0..4 of every byte at once. Lane l of level n holds one
// element of the block (or nothing), so the activations are gathered into
// that order ("slots"); unused slots are 0.
type tritLayout struct {
	id     int    // the layout's index in Acts.trit
	be     int    // elements per weight block
	widths [3]int // bytes in stages A, B and qh
	lanes  int    // bytes loaded per level
	levels int    // levels in the activation layout (PTQ1_0 pads 5 to 6 for pairs)
	slots  []int  // slot → element, −1 for padding; one weight block
}

func newTritLayout(id, be int, widths [3]int, lanes, levels int) *tritLayout {
	l := &tritLayout{id: id, be: be, widths: widths, lanes: lanes, levels: levels}
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
	layoutPTQ1_0 = newTritLayout(0, 128, [3]int{16, 8, 2}, 32, 6)
	layoutTQ1_0  = newTritLayout(1, 256, [3]int{32, 16, 4}, 64, 5)
)

// PTQ1_0 pairs with ggml's Q8_0 of the natural row, as in the generic
// tier; the SIMD layouts are permutations of those int8 values. An int32
// lane (the four bytes 4j..4j+3 of one level) holds four consecutive
// elements, so it lies in one 32-element block and takes that block's
// scale.
//
// The pair layout of the AVX-512 kernel: two weight blocks (56 bytes,
// scales included) fill one ZMM, block h in bytes 28h..28h+27, so int32
// lane 7h+j holds bytes 4j..4j+3 of block h; lanes 14 and 15 hold zero
// codes. A pair spans eight activation blocks (block k of weight block h
// is pair block 4h+k). Per pair it keeps five levels of 64 int8 slots, a
// vector of lane scales per level group and one vector of corrections
// 256·Σq. The kernel sums the levels of each group of ptq1LevelGroups per
// lane, where a lane's levels share an activation block, and multiplies
// each group's sums by the group's lane scales, the scales of the lanes'
// blocks (ptq1Perm): read from memory by both rows of a pair, they cost
// fewer instructions than permuting the eight scales in every row. The
// corrections start the sums of group 0, in a lane of the block's, or in
// lane 14+h, whose codes add nothing.
const (
	pairSlots  = 5 * 64
	pairLanes  = 16
	pairBlocks = 8
	pairScales = 3 * pairLanes
)

// ptq1LevelGroups lists the levels of each group: levels 0–1 of stage A
// hold elements 0–31, levels 2–3 elements 32–63 and level 4 64–79; of
// stage B levels 0–1 are in block 2 and the rest in block 3, as is qh.
var ptq1LevelGroups = [3][]int{{0, 1}, {2, 3}, {4}}

// ptq1Perm holds the pair block (0..7) of each level group's lanes (0
// where the lane's sum is zero), and ptq1CorrLane the lane of group 0
// that carries the correction of each pair block.
var ptq1Perm, ptq1CorrLane = func() (perm [3][pairLanes]int32, corr [pairBlocks]int) {
	l := layoutPTQ1_0
	var found [4]bool
	for g, levels := range ptq1LevelGroups {
		for j := range 7 {
			blk := -1
			for _, n := range levels {
				for m := 4 * j; m < 4*j+4; m++ {
					e := l.slots[n*l.lanes+m]
					if e < 0 {
						continue
					}
					if blk >= 0 && blk != e/qk {
						panic("kernels: PTQ1_0 lane spans two activation blocks")
					}
					blk = e / qk
				}
			}
			if blk < 0 {
				continue
			}
			for h := range 2 {
				perm[g][7*h+j] = int32(4*h + blk)
			}
			if g == 0 && !found[blk] {
				found[blk], corr[blk], corr[4+blk] = true, j, 7+j
			}
		}
	}
	spare := 14
	for k, ok := range found {
		if ok {
			continue
		}
		if spare > 14 {
			panic("kernels: PTQ1_0 needs more spare lanes")
		}
		corr[k], corr[4+k] = spare, spare+1
		perm[0][spare], perm[0][spare+1] = int32(k), int32(4+k)
		spare += 2
	}
	return perm, corr
}()

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

	pstride int // slots per row in pq; per pair, pc holds pairLanes and pds pairScales
	pq      []int8
	pc      []int32
	pds     []float32
}

// prepareTrit builds layout l of a, once per Quantize.
func (a *Acts) prepareTrit(p *Pool, l *tritLayout) *tritActs {
	t := &a.trit[l.id]
	if t.ok {
		return t
	}
	per := len(l.slots) // slots per weight block
	t.stride = a.cols/l.be*per + simdPad
	t.q = grow(t.q, a.n*t.stride)
	t.sz = grow(t.sz, a.n*t.stride/4)
	t.ds = grow(t.ds, a.n*t.stride/4)
	if l == layoutTQ1_0 {
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

// preparePTQ1 permutes the natural Q8_0 activations into the slot layout
// (per level and lane the scale of the lane's block, and each block's
// correction −Σq in the lane of its first element) and the pair layout.
func (a *Acts) preparePTQ1(p *Pool, t *tritActs) {
	q8 := a.prepare(p, actQ8_0)
	l := layoutPTQ1_0
	per := len(l.slots)
	rw := a.cols / l.be
	pairs := (rw + 1) / 2
	t.pstride = pairs * pairSlots
	t.pq = grow(t.pq, a.n*t.pstride)
	t.pc = grow(t.pc, a.n*pairs*pairLanes)
	t.pds = grow(t.pds, a.n*pairs*pairScales)
	p.forGrain(a.n*rw, 16, func(lo, hi int) {
		for wb := lo; wb < hi; wb++ {
			k0 := wb * l.be / qk // the first activation block
			i, b := wb/rw, wb%rw
			off := i*t.stride + b*per
			q := t.q[off : off+per]
			sz, ds := t.sz[off/4:(off+per)/4], t.ds[off/4:(off+per)/4]
			for s, e := range l.slots {
				var v int8
				if e >= 0 {
					v = q8.q[k0*qk+e]
				}
				q[s] = v
			}
			for j := range sz {
				var d float32
				if e := l.slots[4*j]; e >= 0 {
					d = q8.d[k0+e/qk]
				}
				sz[j], ds[j] = 0, d
			}
			for k := range 4 {
				sz[ptq1SlotOf[k*qk]/4] = -q8.s[k0+k]
			}
			// The block's part of its pair: 28 slots per level, lanes
			// 7h..7h+6 and 14+h of the corrections, and the lane scales
			// of its 4 activation blocks. The first block also clears the
			// slots past 56, and the second block's part where it is
			// missing.
			h := b % 2
			pq := t.pq[i*t.pstride+b/2*pairSlots:][:pairSlots]
			pair := i*pairs + b/2
			pc := t.pc[pair*pairLanes:][:pairLanes]
			pds := t.pds[pair*pairScales:][:pairScales]
			for n := range 5 {
				copy(pq[64*n+28*h:64*n+28*h+28], q[n*l.lanes:])
			}
			clear(pc[7*h : 7*h+7])
			pc[14+h] = 0
			for k := range 4 {
				pc[ptq1CorrLane[4*h+k]] = 256 * q8.s[k0+k]
			}
			for g, perm := range ptq1Perm {
				for l, pb := range perm {
					if int(pb)/4 == h {
						pds[g*pairLanes+l] = q8.d[k0+int(pb)%4]
					}
				}
			}
			if h == 1 {
				continue
			}
			for n := range 5 {
				clear(pq[64*n+56 : 64*n+64])
			}
			if b == rw-1 {
				for n := range 5 {
					clear(pq[64*n+28 : 64*n+56])
				}
				clear(pc[7:14])
				pc[15] = 0
				for g, perm := range ptq1Perm {
					for l, pb := range perm {
						if pb/4 == 1 {
							pds[g*pairLanes+l] = 0
						}
					}
				}
			}
		}
	})
}

// ptq1SlotOf is the inverse of PTQ1_0's slot map: element → slot.
var ptq1SlotOf = func() (s [128]int) {
	for i, e := range layoutPTQ1_0.slots {
		if e >= 0 {
			s[e] = i
		}
	}
	return s
}()
