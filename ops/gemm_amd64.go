//go:build amd64 && !purego

package ops

// Register-tile kernels of MulAdd (gemm_amd64.s): C += A·B on four rows of
// C and 32 (AVX-512) or 16 (AVX2) columns, k ≥ 0, strides in elements.

//go:noescape
func mulAdd4x32AVX512(c *float32, ldc int, a *float32, am, ak int, b *float32, ldb, k int)

//go:noescape
func mulAdd4x16AVX2(c *float32, ldc int, a *float32, am, ak int, b *float32, ldb, k int)

var (
	avx2Tiles   = []mulAddTile{{16, mulAdd4x16AVX2}}
	avx512Tiles = []mulAddTile{{32, mulAdd4x32AVX512}, {16, mulAdd4x16AVX2}}
)

// mulAddTiles returns the tiles of the active kernel set, widest first;
// a 16-column AVX2 tile finishes what the AVX-512 one leaves.
func mulAddTiles() []mulAddTile {
	switch active {
	case &avx512Kernels:
		return avx512Tiles
	case &avx2Kernels:
		return avx2Tiles
	}
	return nil
}
