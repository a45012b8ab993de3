package kernels

import (
	"encoding/binary"
	"sync"
)

// The prefill product (n > 1) of the ternary and binary formats is an int8
// GEMM over an unpacked weight tile. A worker unpacks gemmRows weight rows
// of one K chunk once into unsigned codes c = w/d + 1 (so c ∈ {0, 1, 2}
// for ternary weights, 2·bit for Q1_0) in VPDPBUSD order: for every group
// of four activation slots, the 4-byte code groups of the tile's rows side
// by side. Every activation row then meets the tile with one VPDPBUSD per
// four slots and 16 weight rows, its int8 values broadcast from memory.
// An activation block's int32 sums start at −Σq (the correction for the
// offset 1) and meet the block's scale once; a weight block's float sum
// meets the weight scale once, as llama.cpp associates the float products.
//
// The activation slots are the natural elements (Q8_0 or Q8_K), the
// values the matrix-vector kernels use in their own orders. A Q8_K block's
// 256 slots share one scale, so their int32 sums run over the whole block.

// gemmRows is the number of weight rows per tile (two vectors of 16 lanes).
const gemmRows = 32

// gemmRowsPerCall is the number of activation rows one kernel call takes.
const gemmRowsPerCall = 4

// gemmChunk bounds the activation slots per K chunk: the unpacked tile
// (gemmRows bytes per slot, 128 KiB at 4096) stays in L2 while every
// activation row passes over it.
const gemmChunk = 4096

// gemmFormat describes how one weight format enters the GEMM.
type gemmFormat struct {
	slots  int // activation slots (elements) per weight block
	blocks int // activation blocks per weight block
	span   int // slots per activation block, a multiple of 32
	// unpack writes the codes of one weight block of one row: slot group
	// j (four slots) at dst[j·groupStride:], and returns the block's scale.
	unpack func(dst []byte, blk []byte) float32
	// unpack16, where the tier has one, unpacks 16 rows at once.
	unpack16 gemmUnpacker
	// acts fills in the activation layout of a (built on first use).
	acts func(g *gemmActs, a *Acts, p *Pool)
	kern gemmKernel // the micro-kernel of the tier
}

// gemmUnpacker unpacks nb consecutive weight blocks of 16 rows, rb bytes
// apart from src on: the codes of row r to dst[4r:] (slot group j at
// dst[j·groupStride+4r:]) and its scales to ws[r], ws[gemmRows+r], ….
type gemmUnpacker func(dst *byte, ws *float32, src *byte, rb, nb int)

// gemmActs is the activations as the GEMM reads them: row i's slot k is
// q[i·stride+k], and its activation blocks (the computed ones) are
// sd[i·sdRow:].
type gemmActs struct {
	q      []int8
	stride int
	sd     []gemmBlock
	sdRow  int
}

// gemmBlock is one activation block: the correction −Σq for the code
// offset 1, and the scale.
type gemmBlock struct {
	negSum int32
	d      float32
}

// q8Acts serves the formats in activation blocks of span elements.
func q8Acts(k actKind, span int) func(g *gemmActs, a *Acts, p *Pool) {
	return func(g *gemmActs, a *Acts, p *Pool) {
		t := a.prepare(p, k)
		per := span / qk
		g.q, g.stride, g.sdRow = t.q, a.cols, a.cols/span
		g.sd = grow(g.sd, a.n*g.sdRow)
		p.forGrain(len(g.sd), 1<<12, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				var s int32
				for _, v := range t.s[b*per : (b+1)*per] {
					s += v
				}
				g.sd[b] = gemmBlock{-s, t.d[b*per]}
			}
		})
	}
}

// The GEMM's formats, without a tier's unpack16 and kern (see simdGEMM).
var (
	gemmQ2    = &gemmFormat{slots: 128, blocks: 4, span: 32, unpack: unpackQ2, acts: q8Acts(actQ8_0, qk)} // Q2_0, PQ2_0
	gemmQ2g64 = &gemmFormat{slots: 64, blocks: 2, span: 32, unpack: unpackQ2, acts: q8Acts(actQ8_0, qk)}
	gemmQ1    = &gemmFormat{slots: 128, blocks: 4, span: 32, unpack: unpackQ1, acts: q8Acts(actQ8_0, qk)}
	gemmTQ2   = &gemmFormat{slots: 256, blocks: 1, span: 256, unpack: unpackTQ2, acts: q8Acts(actQ8_K, qkK)}
	gemmTQ1   = &gemmFormat{slots: 256, blocks: 1, span: 256, unpack: unpackTQ1, acts: q8Acts(actQ8_K, qkK)}
	gemmPTQ1  = &gemmFormat{slots: 128, blocks: 4, span: 32, unpack: unpackPTQ1, acts: q8Acts(actQ8_0, qk)}
)

// groupStride is the distance between consecutive slot groups of one row
// in the unpacked tile.
const groupStride = gemmRows * 4

// spreadQ2 maps a Q2_0 code byte to its four codes, one per byte.
var spreadQ2 = func() (t [256]uint32) {
	for b := range t {
		t[b] = uint32(b&3) | uint32(b>>2&3)<<8 | uint32(b>>4&3)<<16 | uint32(b>>6)<<24
	}
	return t
}()

// spreadQ1 maps a Q1_0 bit byte to its eight codes 2·bit, one per byte.
var spreadQ1 = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			t[b] |= uint64(b>>i&1) << (8*i + 1)
		}
	}
	return t
}()

// unpackQ2 serves Q2_0, PQ2_0 (128 elements) and Q2_0_g64 (64): byte j
// holds elements 4j..4j+3, code q−1 = w/d.
func unpackQ2(dst, blk []byte) float32 {
	for j, b := range blk[2:] {
		binary.LittleEndian.PutUint32(dst[j*groupStride:], spreadQ2[b])
	}
	return fp16(blk)
}

// unpackQ1: bit j%8 of byte j/8 is element j, weight (2·bit − 1)·d.
func unpackQ1(dst, blk []byte) float32 {
	for j, b := range blk[2:18] {
		v := spreadQ1[b]
		binary.LittleEndian.PutUint32(dst[2*j*groupStride:], uint32(v))
		binary.LittleEndian.PutUint32(dst[(2*j+1)*groupStride:], uint32(v>>32))
	}
	return fp16(blk)
}

// unpackTQ2: byte 32c+m holds element 128c+32l+m at bits 2l.
func unpackTQ2(dst, blk []byte) float32 {
	for c := range 2 {
		for m := 0; m < 32; m += 4 {
			u := binary.LittleEndian.Uint32(blk[32*c+m:])
			for l := range 4 {
				e := 128*c + 32*l + m
				binary.LittleEndian.PutUint32(dst[e/4*groupStride:], u>>(2*l)&0x03030303)
			}
		}
	}
	return fp16(blk[64:])
}

// trits8 returns trit n of each byte of u (eight packed trit bytes), one
// per byte: p = b·3ⁿ mod 256, t = p·3 >> 8, computed four bytes at a time
// in 16-bit lanes.
func trits8(u uint64, n int) uint64 {
	const lanes = 0x00ff00ff00ff00ff
	m := uint64(pow3[n])
	e, o := u&lanes, u>>8&lanes
	e = (e * m & lanes) * 3 >> 8 & lanes
	o = (o * m & lanes) * 3 >> 8 & lanes
	return e | o<<8
}

// pow3 holds 3ⁿ for the trit levels.
var pow3 = [5]uint64{1, 3, 9, 27, 81}

// putTrits writes trit level n of the eight bytes in u as two slot groups
// starting with group g.
func putTrits(dst []byte, g int, u uint64, n int) {
	t := trits8(u, n)
	binary.LittleEndian.PutUint32(dst[g*groupStride:], uint32(t))
	binary.LittleEndian.PutUint32(dst[(g+1)*groupStride:], uint32(t>>32))
}

// unpackTQ1 decodes TQ1_0 into natural order: trit n of qs[m] is element
// 32n+m (m < 32), of qs[32+m] element 160+16n+m, of qh[h] element 240+4n+h.
func unpackTQ1(dst, blk []byte) float32 {
	for n := range 5 {
		for m := 0; m < 32; m += 8 {
			putTrits(dst, (32*n+m)/4, binary.LittleEndian.Uint64(blk[m:]), n)
		}
		for m := 0; m < 16; m += 8 {
			putTrits(dst, (160+16*n+m)/4, binary.LittleEndian.Uint64(blk[32+m:]), n)
		}
	}
	qh := uint64(binary.LittleEndian.Uint32(blk[48:]))
	for n := range 4 {
		binary.LittleEndian.PutUint32(dst[(240+4*n)/4*groupStride:], uint32(trits8(qh, n)))
	}
	return fp16(blk[52:])
}

// unpackPTQ1 decodes PTQ1_0 into natural order: trit n of qs[m] is
// element 16n+m (m < 16), of qs[16+m] element 80+8n+m, of qh[h] element
// 120+2n+h, so a slot group of qh holds trits n and n+1 of both bytes.
func unpackPTQ1(dst, blk []byte) float32 {
	for n := range 5 {
		for m := 0; m < 16; m += 8 {
			putTrits(dst, (16*n+m)/4, binary.LittleEndian.Uint64(blk[m:]), n)
		}
		putTrits(dst, (80+8*n)/4, binary.LittleEndian.Uint64(blk[16:]), n)
	}
	qh := uint64(binary.LittleEndian.Uint16(blk[24:]))
	for n := 0; n < 4; n += 2 {
		g := uint32(trits8(qh, n)) | uint32(trits8(qh, n+1))<<16
		binary.LittleEndian.PutUint32(dst[(120+2*n)/4*groupStride:], g)
	}
	return fp16(blk[26:])
}

// gemmCall is one kernel call: gemmRowsPerCall activation rows against
// one unpacked tile chunk. The assembly reads it by offset.
type gemmCall struct {
	w      *byte    // unpacked codes
	ws     *float32 // weight scales, gemmRows per weight block
	nb     int      // weight blocks
	blocks int      // activation blocks per weight block
	runs   int      // runs of 32 slots per activation block
	q      [gemmRowsPerCall]*int8
	sd     [gemmRowsPerCall]*gemmBlock
	dst    [gemmRowsPerCall]*float32
	mask   [2]uint16 // output lanes stored, per 16 weight rows
	add    int       // 1: add to dst instead of storing
}

// gemmKernel computes the products of one gemmCall.
type gemmKernel func(c *gemmCall)

// gemmTile is a worker's unpacked tile chunk.
type gemmTile struct {
	codes []byte
	ws    []float32
}

var (
	gemmTiles   = sync.Pool{New: func() any { return new(gemmTile) }}
	gemmActsBuf = sync.Pool{New: func() any { return new(gemmActs) }}
)

// matMulGEMM is MatMulActs on format g (its tier's unpack16 and kern).
func (p *Pool) matMulGEMM(dst []float32, w *Matrix, a *Acts, g *gemmFormat) {
	acts := gemmActsBuf.Get().(*gemmActs)
	defer func() {
		acts.q = nil // the pool keeps only sd
		gemmActsBuf.Put(acts)
	}()
	g.acts(acts, a, p)
	f, n, rows := w.Format, a.n, w.Rows
	nbRow := w.Cols / f.BlockElems
	cb := min(nbRow, max(1, gemmChunk/g.slots)) // weight blocks per chunk
	groups := g.slots / 4                       // slot groups per weight block
	tiles := (rows + gemmRows - 1) / gemmRows
	p.For(tiles, func(lo, hi int) {
		tile := gemmTiles.Get().(*gemmTile)
		defer gemmTiles.Put(tile)
		tile.codes = grow(tile.codes, cb*groups*groupStride)
		tile.ws = grow(tile.ws, cb*gemmRows)
		codes, ws := tile.codes, tile.ws
		var spare [gemmRows]float32 // output of the rows past n
		for t := lo; t < hi; t++ {
			r0 := t * gemmRows
			nr := min(gemmRows, rows-r0)
			mask := uint32(1)<<nr - 1
			for b0 := 0; b0 < nbRow; b0 += cb {
				b1 := min(nbRow, b0+cb)
				for r := 0; r < nr; r++ {
					if r%16 == 0 && nr-r >= 16 && g.unpack16 != nil {
						rb := w.rowBytes()
						g.unpack16(&codes[r*4], &ws[r], &w.Data[(r0+r)*rb+b0*f.BlockBytes], rb, b1-b0)
						r += 15
						continue
					}
					row := w.row(r0 + r)
					off := r / 16 * 64 // the vector
					off += r % 16 * 4  // the lane
					for b := b0; b < b1; b++ {
						blk := row[b*f.BlockBytes : (b+1)*f.BlockBytes]
						ws[(b-b0)*gemmRows+r] = g.unpack(codes[(b-b0)*groups*groupStride+off:], blk)
					}
				}
				c := gemmCall{
					w: &codes[0], ws: &ws[0], nb: b1 - b0, blocks: g.blocks, runs: g.span / 32,
					mask: [2]uint16{uint16(mask), uint16(mask >> 16)},
				}
				if b0 > 0 {
					c.add = 1
				}
				k0, s0 := b0*g.slots, b0*g.blocks
				for i := 0; i < n; i += gemmRowsPerCall {
					for j := range gemmRowsPerCall {
						if i+j < n {
							c.q[j] = &acts.q[(i+j)*acts.stride+k0]
							c.sd[j] = &acts.sd[(i+j)*acts.sdRow+s0]
							c.dst[j] = &dst[(i+j)*rows+r0]
						} else {
							c.q[j], c.sd[j], c.dst[j] = c.q[0], c.sd[0], &spare[0]
						}
					}
					g.kern(&c)
				}
			}
		}
	})
}
