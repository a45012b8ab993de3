//go:build amd64 && !purego

package kernels

import (
	"trit/quant"
)

func init() {
	for f := range gemmFormats {
		kernelTable[f].gemm[tierAVX512] = gemmAVX512
	}
	if hwTier < tierAVX512 {
		return
	}
	for f, fn := range map[*quant.Format]gemmUnpacker{
		quant.Q2_0: unpackQ2AVX512, quant.PQ2_0: unpackQ2AVX512, quant.Q2_0g64: unpackQ2g64AVX512,
		quant.Q1_0: unpackQ1AVX512, quant.TQ2_0: unpackTQ2AVX512, quant.TQ1_0: unpackTQ1AVX512,
		quant.PTQ1_0: unpackPTQ1AVX512,
	} {
		gemmFormats[f].unpack16 = fn
	}
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
