package bench

import (
	"encoding/binary"
	"math/rand/v2"

	"trit/quant"
)

// A blockLayout says where a ternary block keeps its scale and which kind
// of code byte fills each span, so that random blocks can be made without
// quantizing floats: every code byte is drawn from the table of valid bytes
// for its span.
type blockLayout struct {
	dOff  int // offset of the fp16 scale
	spans []span
}

type span struct {
	off, n int
	valid  *[256]byte // byte i of a random word maps to valid[i]
}

// Valid code bytes, each spread over 256 entries so that a random byte
// picks one almost uniformly.
var (
	anyByte   = spread(256, func(i int) byte { return byte(i) })
	fourCodes = spread(81, func(i int) byte { // four 2-bit codes in 0..2
		return byte(i%3 | i/3%3<<2 | i/9%3<<4 | i/27%3<<6)
	})
	fiveTrits = spread(243, func(q int) byte { return byte((q*256 + 242) / 243) })
	fourTrits = spread(81, func(q int) byte { return byte((3*q*256 + 242) / 243) })
)

// spread returns the table mapping a byte b to make(b·n/256): the n valid
// bytes, each for ⌈256/n⌉ or ⌊256/n⌋ values of b.
func spread(n int, make func(int) byte) *[256]byte {
	var t [256]byte
	for b := range t {
		t[b] = make(b * n / 256)
	}
	return &t
}

// layouts are the packed ternary formats (see docs/formats.md): the 2-bit
// packs hold four codes per byte, Q1_0 eight signs, the base-3 packs five
// (qs) or four (qh) trits per byte.
var layouts = map[*quant.Format]*blockLayout{
	quant.Q2_0:    {dOff: 0, spans: []span{{2, 32, fourCodes}}},
	quant.Q2_0g64: {dOff: 0, spans: []span{{2, 16, fourCodes}}},
	quant.PQ2_0:   {dOff: 0, spans: []span{{2, 32, fourCodes}}},
	quant.TQ2_0:   {dOff: 64, spans: []span{{0, 64, fourCodes}}},
	quant.Q1_0:    {dOff: 0, spans: []span{{2, 16, anyByte}}},
	quant.TQ1_0:   {dOff: 52, spans: []span{{0, 48, fiveTrits}, {48, 4, fourTrits}}},
	quant.PTQ1_0:  {dOff: 26, spans: []span{{0, 24, fiveTrits}, {24, 2, fourTrits}}},
}

// fill writes random blocks of blockBytes each over buf (a whole number of
// blocks), all with the scale bits d.
func (l *blockLayout) fill(buf []byte, blockBytes int, d uint16, rng *rand.Rand) {
	var word uint64
	left := 0
	for blk := buf; len(blk) >= blockBytes; blk = blk[blockBytes:] {
		for _, s := range l.spans {
			valid := s.valid
			for i := s.off; i < s.off+s.n; i++ {
				if left == 0 {
					word, left = rng.Uint64(), 8
				}
				blk[i] = valid[byte(word)]
				word >>= 8
				left--
			}
		}
		binary.LittleEndian.PutUint16(blk[l.dOff:], d)
	}
}
