//go:build amd64 && !purego

package kernels

// simdGEMM returns g with the AVX-512 micro-kernel and the 16-row
// unpacker u.
func simdGEMM(g *gemmFormat, u gemmUnpacker) *gemmFormat {
	c := *g
	c.unpack16, c.kern = u, gemmAVX512
	return &c
}

// gemmAVX512 is the micro-kernel.
//
//go:noescape
func gemmAVX512(c *gemmCall)

// The unpackers (VPMULTISHIFTQB: VBMI) take nb blocks of 16 rows rb
// bytes apart, from src on (see gemmUnpacker).

//go:noescape
func unpackQ2AVX512(dst *byte, ws *float32, src *byte, rb, nb int)

//go:noescape
func unpackQ2g64AVX512(dst *byte, ws *float32, src *byte, rb, nb int)

//go:noescape
func unpackQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)

//go:noescape
func unpackTQ2AVX512(dst *byte, ws *float32, src *byte, rb, nb int)

//go:noescape
func unpackTQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)

//go:noescape
func unpackPTQ1AVX512(dst *byte, ws *float32, src *byte, rb, nb int)
