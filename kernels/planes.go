package kernels

// The plane layouts serve the AVX-512 decode kernels of Q2_0/PQ2_0,
// Q2_0_g64, TQ2_0 and Q1_0 (planes_amd64.s). A row is cut into chunks; a
// chunk of e elements holds planes of equal size, plane t first. The kernel loads the
// chunk's weight code bytes into one vector, and plane t lines up with
// those bytes shifted right by t code widths and masked, so VPDPBUSD lane ℓ
// (bytes 4ℓ..4ℓ+3) adds four products per plane. The planes are ordered so
// that one int32 lane never mixes two activation blocks (or, for Q8_K, the
// chunk has one scale): a lane's sum over all planes is converted and
// scaled once per chunk, with a correction lane sz (−Σq, added to the int32
// sum) and a scale lane ds per lane.
type planeLayout int

const (
	noPlanes planeLayout = iota
	// planeQ2 (Q2_0 and Q2_0_g64, Q8_0 activations): 256-element chunks
	// (the last may be narrower) of four planes of e/4 bytes; element 16ℓ+4k+t (code t of
	// byte 4ℓ+k) is byte 4ℓ+k of plane t, so lane ℓ covers elements
	// 16ℓ..16ℓ+15 of 32-block ℓ/2. 16 lanes per 256 elements.
	planeQ2
	// planeTQ2 (TQ2_0, Q8_K activations): 256-element chunks; byte 32h+m
	// of a block holds element 128h+32l+m at bits 2l, so plane l is
	// elements 32l.. and 128+32l.., 32 each. 16 lanes per 256 elements.
	planeTQ2
	// planeQ1 (Q1_0, Q8_0 activations): 512-element chunks of eight planes
	// of 64 bytes; element 8j+t (bit t of code byte j) is byte j of plane
	// t, so lane ℓ covers 32-block ℓ. 16 lanes per 512 elements; a row's
	// last cols mod 512 elements have no plane layout.
	planeQ1
	numPlaneLayouts
)

// planeInfo gives each layout's activation quantization, chunk size and
// elements per lane.
var planeInfo = [numPlaneLayouts]struct {
	act          actKind
	chunk, lanes int
}{
	planeQ2:  {actQ8_0, 256, 16},
	planeTQ2: {actQ8_K, 256, 16},
	planeQ1:  {actQ8_0, 512, 32},
}

// The AVX-512 tier's activation quantizer and plane builders
// (decode_amd64.go), nil where the build or the CPU has none. They give
// the same bits as their Go twins: quantizeBlock, quantizeBlockK,
// planeQ2Go and planeQ1Go.
var (
	quantQ8_0SIMD func(q []int8, d []float32, s []int32, x []float32)
	quantQ8_KSIMD func(q []int8, d []float32, s []int32, x []float32)
	planeQ2SIMD   func(dst, src []int8)
	planeQ1SIMD   func(dst, src []int8)
)

// quantizeQ8_0 quantizes the len(d) 32-value blocks of x into q, d and s
// (quantizeBlock).
func quantizeQ8_0(q []int8, d []float32, s []int32, x []float32) {
	if quantQ8_0SIMD != nil && tier == tierAVX512 {
		quantQ8_0SIMD(q, d, s, x)
		return
	}
	for b := range d {
		d[b], s[b] = quantizeBlock(q[b*qk:(b+1)*qk], x[b*qk:(b+1)*qk])
	}
}

// quantizeQ8_K quantizes the 256-value blocks of x into q (quantizeBlockK)
// and stores, per 32-value block, the block's scale in d and the sum of
// its 32 values in s.
func quantizeQ8_K(q []int8, d []float32, s []int32, x []float32) {
	if quantQ8_KSIMD != nil && tier == tierAVX512 {
		quantQ8_KSIMD(q, d, s, x)
		return
	}
	const per = qkK / qk
	for b := range len(d) / per {
		qb := q[b*qkK : (b+1)*qkK]
		db := quantizeBlockK(qb, x[b*qkK:(b+1)*qkK])
		for j := range per {
			var sum int32
			for _, v := range qb[j*qk : (j+1)*qk] {
				sum += int32(v)
			}
			d[b*per+j], s[b*per+j] = db, sum
		}
	}
}

// planeQ2Go writes the planeQ2 bytes of one chunk of len(src) elements (a
// multiple of 64): element 16ℓ+4k+t is byte 4ℓ+k of plane t.
func planeQ2Go(dst, src []int8) {
	e := len(src)
	for pl := range 4 {
		for ln := range e / 16 {
			for j := range 4 {
				dst[pl*e/4+4*ln+j] = src[16*ln+4*j+pl]
			}
		}
	}
}

// planeQ1Go writes the planeQ1 bytes of one 512-element chunk: element
// 8j+t is byte j of plane t.
func planeQ1Go(dst, src []int8) {
	for pl := range 8 {
		for j := range 64 {
			dst[64*pl+j] = src[8*j+pl]
		}
	}
}

// planeActs is one plane layout of every row. Row i starts at byte
// i·stride of q and at lane i·stride/lanes of sz and ds.
type planeActs struct {
	ok     bool
	stride int
	q      []int8
	sz     []int32
	ds     []float32
}

// preparePlanes builds plane layout l of a once per Quantize.
func (a *Acts) preparePlanes(p *Pool, l planeLayout) *planeActs {
	pt := &a.planes[l]
	if pt.ok {
		return pt
	}
	info := planeInfo[l]
	t := a.prepare(p, info.act)
	pt.stride = a.cols + simdPad
	pt.q = grow(pt.q, a.n*pt.stride)
	pt.sz = grow(pt.sz, a.n*pt.stride/info.lanes)
	pt.ds = grow(pt.ds, a.n*pt.stride/info.lanes)
	nc := a.cols / info.chunk // whole chunks per row
	if l == planeQ2 {
		nc = (a.cols + info.chunk - 1) / info.chunk
	}
	p.forGrain(a.n*nc, 128, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			i, e0 := c/nc, c%nc*info.chunk
			e := min(info.chunk, a.cols-e0)
			src := t.q[i*a.cols+e0 : i*a.cols+e0+e]
			off := i*pt.stride + e0
			dst := pt.q[off : off+e]
			nl := e / info.lanes
			sz := pt.sz[off/info.lanes : off/info.lanes+nl]
			ds := pt.ds[off/info.lanes : off/info.lanes+nl]
			b0 := (i*a.cols + e0) / qk // first 32-block of the chunk
			switch l {
			case planeQ2:
				if planeQ2SIMD != nil && tier == tierAVX512 {
					planeQ2SIMD(dst, src)
				} else {
					planeQ2Go(dst, src)
				}
				for ln := range nl {
					sz[ln], ds[ln] = 0, t.d[b0+ln/2]
					if ln%2 == 0 {
						sz[ln] = -t.s[b0+ln/2]
					}
				}
			case planeTQ2:
				var s int32
				for pl := range 4 {
					copy(dst[64*pl:64*pl+32], src[32*pl:32*pl+32])
					copy(dst[64*pl+32:64*pl+64], src[128+32*pl:128+32*pl+32])
				}
				for b := range qkK / qk {
					s += t.s[b0+b]
				}
				for ln := range nl {
					sz[ln], ds[ln] = 0, t.d[b0]
				}
				sz[0] = -s
			case planeQ1:
				if planeQ1SIMD != nil && tier == tierAVX512 {
					planeQ1SIMD(dst, src)
				} else {
					planeQ1Go(dst, src)
				}
				for ln := range nl {
					sz[ln], ds[ln] = -t.s[b0+ln], t.d[b0+ln]
				}
			}
		}
	})
	pt.ok = true
	return pt
}
