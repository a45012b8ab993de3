package kernels

// The generic tier computes the positional ternary formats with lookup
// tables built from the activations (the T-MAC idea): for every code byte
// position g of a row, table g maps each of the 256 byte values to the
// exact int16 sum of its codes times the activations that byte covers. A
// row's dot product is then one table load and add per code byte (4 or 8
// weights) instead of a multiply-add per weight. A table costs 512 bytes
// per byte position (128 bytes per activation for Q2_0, 64 for Q1_0) and is
// built once per activation row, so it pays off when many weight rows share
// that row (every real matrix).

// lutKernel is one layout's table builder and table dot product.
type lutKernel struct {
	elems int // activations covered by one code byte
	// chunk is the column tile (a multiple of the weight block) whose
	// tables, 512·chunk/elems bytes, stay in L1 while every row of a row
	// tile reads them; a whole row's tables (2 MiB for 4096 Q2_0 columns)
	// would miss L1 and L2 on nearly every lookup.
	chunk int
	// build fills lut (cols/elems·256 entries) from one int8 activation row.
	build func(q []int8, lut []int16)
	// dot returns sum + Σ W·x̂ over the weight blocks of w, given their
	// tables and activation block data; sum carries the blocks before w so
	// that a tiled row adds its blocks in the same order as an untiled one.
	dot func(w []byte, lut []int16, d []float32, s []int32, sum float32) float32
}

var (
	lutQ2_0 = &lutKernel{elems: 4, chunk: 2048, build: buildQ2, dot: func(w []byte, lut []int16, d []float32, s []int32, sum float32) float32 {
		return lutDotQ2(w, lut, d, s, 4, sum)
	}}
	lutQ2_0g64 = &lutKernel{elems: 4, chunk: 2048, build: buildQ2, dot: func(w []byte, lut []int16, d []float32, s []int32, sum float32) float32 {
		return lutDotQ2(w, lut, d, s, 2, sum)
	}}
	lutQ1_0  = &lutKernel{elems: 8, chunk: 4096, build: buildQ1, dot: lutDotQ1}
	lutTQ2_0 = &lutKernel{elems: 4, chunk: 2048, build: buildTQ2, dot: lutDotTQ2}
	lutTQ1_0 = &lutKernel{elems: 4, chunk: 2048, build: buildTQ1, dot: lutDotTQ1} // 52 of every 64 positions used
)

// lutRowTile is the number of weight rows that share one pass over the
// column tiles: enough that streaming the tables from L2/L3 once per row
// tile costs little next to the lookups, few enough that the row tile's
// weights (≈ 1 MiB for 4096 Q2_0 columns) stay in cache between tiles.
const lutRowTile = 256

// rows sets dst[r] = Σ W[r]·x̂ for weight rows lo..hi-1 from the row's
// tables lut, walking column tiles inside row tiles.
func (lk *lutKernel) rows(dst []float32, w *Matrix, lut []int16, d []float32, s []int32, lo, hi int) {
	f := w.Format
	for r0 := lo; r0 < hi; r0 += lutRowTile {
		r1 := min(hi, r0+lutRowTile)
		out := dst[r0:r1]
		clear(out)
		for c := 0; c < w.Cols; c += lk.chunk {
			e := min(w.Cols, c+lk.chunk)
			wb, we := c/f.BlockElems*f.BlockBytes, e/f.BlockElems*f.BlockBytes
			t := lut[c/lk.elems*256 : e/lk.elems*256]
			dc, sc := d[c/qk:e/qk], s[c/qk:e/qk]
			for j := range out {
				out[j] = lk.dot(w.row(r0 + j)[wb:we], t, dc, sc, out[j])
			}
		}
	}
}

// buildQ2 tables the 2-bit codes c ∈ {0..3} of a byte (element 4g+j at
// bits 2j): entry b = Σ_j c_j(b)·q[4g+j], |entry| ≤ 3·4·127.
func buildQ2(q []int8, lut []int16) {
	var lo, hi [16]int16
	for g := 0; g < len(q)/4; g++ {
		a := q[4*g : 4*g+4]
		for c := range 16 {
			lo[c] = int16(c&3)*int16(a[0]) + int16(c>>2)*int16(a[1])
			hi[c] = int16(c&3)*int16(a[2]) + int16(c>>2)*int16(a[3])
		}
		t := lut[256*g : 256*g+256]
		for h := range 16 {
			for l := range 16 {
				t[16*h+l] = hi[h] + lo[l]
			}
		}
	}
}

// buildQ1 tables the bits of a byte (element 8g+j at bit j) as codes
// c = 2·bit: entry b = Σ_j 2·bit_j(b)·q[8g+j], |entry| ≤ 2·8·127.
func buildQ1(q []int8, lut []int16) {
	var lo, hi [16]int16
	for g := 0; g < len(q)/8; g++ {
		a := q[8*g : 8*g+8]
		for c := range 16 {
			var l, h int16
			for j := range 4 {
				if c>>j&1 != 0 {
					l += 2 * int16(a[j])
					h += 2 * int16(a[4+j])
				}
			}
			lo[c], hi[c] = l, h
		}
		t := lut[256*g : 256*g+256]
		for h := range 16 {
			for l := range 16 {
				t[16*h+l] = hi[h] + lo[l]
			}
		}
	}
}

// lutDotQ2 is the Q2_0 (kb = 4) and Q2_0_g64 (kb = 2) row product, in the
// association of ggml's generic kernel.
func lutDotQ2(w []byte, lut []int16, d []float32, s []int32, kb int, sum float32) float32 {
	bb := 2 + 8*kb
	for b, k := 0, 0; b+bb <= len(w); b += bb {
		blk := w[b : b+bb]
		var sumi float32
		for j := 0; j < kb; j, k = j+1, k+1 {
			c := (*[8]byte)(blk[2+8*j:])
			t := (*[2048]int16)(lut[2048*k:])
			v := int32(t[c[0]]) + int32(t[256+int(c[1])]) + int32(t[512+int(c[2])]) + int32(t[768+int(c[3])]) +
				int32(t[1024+int(c[4])]) + int32(t[1280+int(c[5])]) + int32(t[1536+int(c[6])]) + int32(t[1792+int(c[7])])
			sumi += d[k] * float32(v-s[k])
		}
		sum += fp16(blk) * sumi
	}
	return sum
}

// lutDotQ1 is the Q1_0 row product: Σ 2·bit·q − s = Σ (±1)·q per block.
func lutDotQ1(w []byte, lut []int16, d []float32, s []int32, sum float32) float32 {
	for b, k := 0, 0; b+18 <= len(w); b += 18 {
		blk := w[b : b+18]
		var sumi float32
		for j := 0; j < 4; j, k = j+1, k+1 {
			c := (*[4]byte)(blk[2+4*j:])
			t := (*[1024]int16)(lut[1024*k:])
			v := int32(t[c[0]]) + int32(t[256+int(c[1])]) + int32(t[512+int(c[2])]) + int32(t[768+int(c[3])])
			sumi += d[k] * float32(v-s[k])
		}
		sum += fp16(blk) * sumi
	}
	return sum
}

// buildTQ2 tables TQ2_0's code bytes: byte m of the 32-byte group c of a
// 256-element block holds elements 128c+32l+m at bits 2l, so entry b of its
// table is Σ_l c_l(b)·q[128c+32l+m], |entry| ≤ 3·4·127. All four elements
// share the block's one Q8_K scale, so mixing activation blocks is exact.
func buildTQ2(q []int8, lut []int16) {
	var lo, hi [16]int16
	for g := 0; g < len(q)/4; g++ {
		base := g/32*128 + g%32 // first element of byte position g
		a0, a1, a2, a3 := q[base], q[base+32], q[base+64], q[base+96]
		for c := range 16 {
			lo[c] = int16(c&3)*int16(a0) + int16(c>>2)*int16(a1)
			hi[c] = int16(c&3)*int16(a2) + int16(c>>2)*int16(a3)
		}
		t := lut[256*g : 256*g+256]
		for h := range 16 {
			for l := range 16 {
				t[16*h+l] = hi[h] + lo[l]
			}
		}
	}
}

// lutDotTQ2 is the TQ2_0 row product on buildTQ2's tables: one exact int32
// sum per 256-element block times the product of the two scales, as in
// ggml's generic kernel.
func lutDotTQ2(w []byte, lut []int16, d []float32, s []int32, sum float32) float32 {
	for b, k := 0, 0; b+66 <= len(w); b, k = b+66, k+8 {
		blk := w[b : b+66]
		t := (*[64 * 256]int16)(lut[2048*k:])
		var v int32
		for m, c := range blk[:64] {
			v += int32(t[256*m+int(c)])
		}
		ss := s[k : k+8]
		v -= ss[0] + ss[1] + ss[2] + ss[3] + ss[4] + ss[5] + ss[6] + ss[7]
		sum += float32(v) * (d[k] * fp16(blk[64:]))
	}
	return sum
}

// buildTQ1 tables TQ1_0's base-3 bytes, 64 table positions per
// 256-element block of which 52 are used: stage A byte m (position m) holds
// elements 32n+m, stage B byte m (position 32+m) 160+16n+m, qh byte h
// (position 48+h, four trits) 240+4n+h. Entry b = Σ_n t_n(b)·q[element n],
// |entry| ≤ 2·5·127; the block's one Q8_K scale makes the mix exact.
func buildTQ1(q []int8, lut []int16) {
	for b := 0; b+256 <= len(q); b += 256 {
		x := q[b : b+256]
		t := lut[b/4*256 : b/4*256+64*256]
		for m := range 32 {
			tritTable(t[256*m:256*m+256], x[m], x[32+m], x[64+m], x[96+m], x[128+m])
		}
		for m := range 16 {
			tritTable(t[256*(32+m):256*(33+m)], x[160+m], x[176+m], x[192+m], x[208+m], x[224+m])
		}
		for h := range 4 {
			tritTable(t[256*(48+h):256*(49+h)], x[240+h], x[244+h], x[248+h], x[252+h], 0)
		}
	}
}

// tritTable sets t[c] = Σ_n trits[c][n]·a_n for every byte value c.
func tritTable(t []int16, a0, a1, a2, a3, a4 int8) {
	t = t[:256]
	for c := range t {
		tr := &trits[c]
		t[c] = int16(tr[0])*int16(a0) + int16(tr[1])*int16(a1) + int16(tr[2])*int16(a2) +
			int16(tr[3])*int16(a3) + int16(tr[4])*int16(a4)
	}
}

// lutDotTQ1 is the TQ1_0 row product on buildTQ1's tables: one exact int32
// sum per 256-element block times the product of the two scales, as in
// ggml's generic kernel.
func lutDotTQ1(w []byte, lut []int16, d []float32, s []int32, sum float32) float32 {
	for b, k := 0, 0; b+54 <= len(w); b, k = b+54, k+8 {
		blk := w[b : b+54]
		t := (*[52 * 256]int16)(lut[2048*k:])
		var v int32
		for m, c := range blk[:52] {
			v += int32(t[256*m+int(c)])
		}
		ss := s[k : k+8]
		v -= ss[0] + ss[1] + ss[2] + ss[3] + ss[4] + ss[5] + ss[6] + ss[7]
		sum += float32(v) * (d[k] * fp16(blk[52:]))
	}
	return sum
}

// matMulLUT is MatMulActs for the generic tier of a table format, with
// tables built from activation quantization act.
func (p *Pool) matMulLUT(dst []float32, w *Matrix, a *Acts, lk *lutKernel, act actKind) {
	n, rows := a.n, w.Rows
	a.prepare(p, act)
	size := a.cols / lk.elems * 256
	if n < 2*p.threads {
		// Few activation rows: share one table, split the weight rows.
		a.lut = grow(a.lut, size)
		for i := range n {
			q, d, s := actRow(a, act, i)
			lk.build(q, a.lut)
			p.forGrain(rows, 8, func(lo, hi int) {
				lk.rows(dst[i*rows:(i+1)*rows], w, a.lut, d, s, lo, hi)
			})
		}
		return
	}
	// Many rows: each worker owns a table and takes whole activation rows.
	p.For(n, func(lo, hi int) {
		lut := make([]int16, size)
		for i := lo; i < hi; i++ {
			q, d, s := actRow(a, act, i)
			lk.build(q, lut)
			lk.rows(dst[i*rows:(i+1)*rows], w, lut, d, s, 0, rows)
		}
	})
}
