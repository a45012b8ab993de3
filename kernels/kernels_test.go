package kernels

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"trit/half"
	"trit/internal/cpu"
	"trit/quant"
)

// scaleOffsets lists where each format keeps its fp16 scales in a block.
var scaleOffsets = map[*quant.Format][]int{
	quant.Q8_0: {0}, quant.Q4_0: {0}, quant.Q4_K: {0, 2}, quant.Q6_K: {208},
	quant.TQ1_0: {52}, quant.TQ2_0: {64}, quant.Q1_0: {0}, quant.Q2_0: {0},
	quant.Q2_0g64: {0}, quant.PQ2_0: {0}, quant.PTQ1_0: {26},
}

// randMatrix returns rows×cols of random packed data with finite scales in
// [−0.1, 0.1] (float formats: values in [−1, 1]).
func randMatrix(t testing.TB, f *quant.Format, rows, cols int, rng *rand.Rand) *Matrix {
	t.Helper()
	data := make([]byte, rows*cols/f.BlockElems*f.BlockBytes)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	switch f {
	case quant.F32:
		for i := 0; i < len(data); i += 4 {
			binary.LittleEndian.PutUint32(data[i:], math.Float32bits(rng.Float32()*2-1))
		}
	case quant.F16:
		for i := 0; i < len(data); i += 2 {
			binary.LittleEndian.PutUint16(data[i:], half.FromFloat32(rng.Float32()*2-1))
		}
	case quant.BF16:
		for i := 0; i < len(data); i += 2 {
			binary.LittleEndian.PutUint16(data[i:], half.BF16FromFloat32(rng.Float32()*2-1))
		}
	default:
		for b := 0; b < len(data); b += f.BlockBytes {
			for _, off := range scaleOffsets[f] {
				binary.LittleEndian.PutUint16(data[b+off:], half.FromFloat32(rng.Float32()*0.2-0.1))
			}
		}
	}
	w, err := NewMatrix(f, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func randActs(n, cols int, rng *rand.Rand) []float32 {
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// tiers returns the tiers this machine can run.
func tiers() []string {
	var names []string
	for t := range hwTier + 1 {
		names = append(names, cpu.Name(t))
	}
	return names
}

// exactRef returns, in float64, Σ_j W[r,j]·x̂[i,j] with x̂ the dequantized
// int8 activations — the value every integer kernel approximates — and
// the magnitude S = Σ_j |W[r,j]·x̂[i,j]| that bounds its rounding error.
//
// The int8 activations are those of the format's quantization (built here
// with p if no product has built them yet).
func exactRef(p *Pool, w *Matrix, a *Acts, i, r int) (ref, mag float64) {
	buf := make([]float32, w.Cols)
	decodeRow(w.Format, w.row(r), buf)
	xh := make([]float64, w.Cols)
	k := traitsFor(w.Format, tierGeneric)
	for j := range xh {
		xh[j] = float64(a.x[i*a.cols+j])
		if !k.float {
			t := a.prepare(p, k.act)
			b := (i*a.cols + j) / qk
			xh[j] = float64(t.d[b]) * float64(t.q[i*a.cols+j])
		}
	}
	for j, v := range buf {
		ref += float64(v) * xh[j]
		mag += math.Abs(float64(v) * xh[j])
	}
	if w.Format == quant.PTQ1_0 {
		// The AVX-512 kernel sums the codes t = w/d + 1 and adds each
		// block's −Σq correction in a lane of its own, so the lanes cancel
		// in float: the code sum and the correction bound its error.
		mag = 0
		row := w.row(r)
		for j, v := range buf {
			d := fp16(row[j/128*28+26:])
			mag += (math.Abs(float64(v)) + 2*math.Abs(float64(d))) * math.Abs(xh[j])
		}
	}
	if w.Format == quant.Q4_K {
		// The kernel computes d·sc·Σq·x̂ and dmin·m·Σx̂ separately; their
		// magnitudes bound its error, not that of the difference.
		mag = 0
		nb := w.Cols / 256
		row := w.row(r)
		for b := range nb {
			blk := row[b*144:]
			d, dmin := fp16(blk), fp16(blk[2:])
			for j := range 256 {
				s, m := q4kScale(blk[4:16], j/32)
				mag += (math.Abs(float64(d)*float64(s)*15) + math.Abs(float64(dmin)*float64(m))) * math.Abs(xh[256*b+j])
			}
		}
	}
	return ref, mag
}

// bound returns the factor of the TestTiers error bound for a row of cols.
func bound(f *quant.Format, cols int) float64 {
	switch {
	case traitsFor(f, tierGeneric).float:
		return float64(cols/4 + 8)
	}
	return float64(cols/qk + 8)
}

// TestTiers checks every kernel of every tier this machine has against the
// exact value. Bound: each 32-element block's exact int32 product passes
// through at most 3 float32 roundings and the row sum adds one per block,
// so |got − exact| ≤ (blocks + 8)·2⁻²³·S. The float kernels sum K products
// in four chains: ≤ (K/4 + 8)·2⁻²³·S.
func TestTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := NewPool(2)
	defer p.Close()
	for _, f := range quant.All {
		// 1152: an odd number of 128-blocks, two 512-element chunks and a
		// 128-element rest; 320: a 64-element rest (the plane kernels'
		// tails).
		for _, cols := range []int{512, 1152, 320} {
			if cols%f.BlockElems != 0 {
				continue
			}
			testTiers(t, p, f, cols, rng)
		}
	}
}

// testTiers is TestTiers for one format and row length.
func testTiers(t *testing.T, p *Pool, f *quant.Format, cols int, rng *rand.Rand) {
	// 4 and 5: the few-row path; 20 and 21: the GEMM (where the tier has
	// one), whole row groups of four and a partial one.
	for _, n := range []int{1, 4, 5, 20, 21} {
		w := randMatrix(t, f, 37, cols, rng)
		var a Acts
		p.Quantize(&a, randActs(n, cols, rng), n, cols)
		for _, name := range tiers() {
			restore, err := useTier(name)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, n*w.Rows)
			p.MatMulActs(dst, w, &a)
			restore()
			terms := bound(f, cols)
			for i := range n {
				for r := range w.Rows {
					ref, mag := exactRef(p, w, &a, i, r)
					if got := float64(dst[i*w.Rows+r]); math.Abs(got-ref) > terms*0x1p-23*mag {
						t.Fatalf("%s tier %s n=%d [%d,%d]: got %g want %g (bound %g)", f, name, n, i, r, got, ref, terms*0x1p-23*mag)
					}
				}
			}
		}
	}
}

// TestMatMulVsFloat checks the int8 path against the float reference: the
// activation rounding error is at most d_a/2 per element, so
// |MatMul − MatMulFloat| ≤ Σ_j |W_j|·d_a(j)/2, plus float slack.
func TestMatMulVsFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := NewPool(2)
	defer p.Close()
	for _, f := range quant.All {
		const n, cols = 2, 256
		w := randMatrix(t, f, 9, cols, rng)
		x := randActs(n, cols, rng)
		got, want := make([]float32, n*w.Rows), make([]float32, n*w.Rows)
		p.MatMul(got, w, x, n)
		p.MatMulFloat(want, w, x, n)
		buf := make([]float32, cols)
		for i := range n {
			// The activation step is amax/127 over the quantization's block.
			bs := qk
			if traitsFor(f, tierGeneric).act == actQ8_K {
				bs = qkK
			}
			var amax [cols / qk]float64
			for j := range cols {
				amax[j/bs] = max(amax[j/bs], math.Abs(float64(x[i*cols+j])))
			}
			for r := range w.Rows {
				w.Row(r, buf)
				var bound, mag float64
				for j, v := range buf {
					mag += math.Abs(float64(v) * float64(x[i*cols+j]))
					if !traitsFor(f, tierGeneric).float {
						bound += math.Abs(float64(v)) * amax[j/bs] / 127 * 0.5 * 1.001
					}
				}
				bound += 1e-5 * mag
				if d := math.Abs(float64(got[i*w.Rows+r] - want[i*w.Rows+r])); d > bound {
					t.Errorf("%s [%d,%d]: MatMul %g, MatMulFloat %g (bound %g)", f, i, r, got[i*w.Rows+r], want[i*w.Rows+r], bound)
				}
			}
		}
	}
}

// TestLargeMatMul runs the n > 1 paths across tile and K-chunk edges and
// checks them against n separate matrix-vector products: equal within the
// TestTiers bound (the GEMM's K chunks change only the float association;
// TestBatchInvariance checks the bits where they must be equal).
func TestLargeMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPool(2)
	defer p.Close()
	for _, f := range []*quant.Format{quant.Q2_0, quant.Q2_0g64, quant.TQ2_0, quant.Q1_0, quant.PTQ1_0, quant.TQ1_0, quant.F16} {
		const cols = 11264 // a multiple of 256; a tile holds only a few rows
		w := randMatrix(t, f, 35, cols, rng)
		for _, n := range []int{7, fewRows + 3} {
			x := randActs(n, cols, rng)
			got := make([]float32, n*w.Rows)
			p.MatMul(got, w, x, n)
			gemm := n > fewRows && traitsFor(f, tier).gemm != nil
			one := make([]float32, w.Rows)
			var a Acts
			for i := range n {
				p.MatMul(one, w, x[i*cols:(i+1)*cols], 1)
				p.Quantize(&a, x[i*cols:(i+1)*cols], 1, cols)
				for r := range w.Rows {
					g := got[i*w.Rows+r]
					if !gemm {
						if math.Float32bits(g) != math.Float32bits(one[r]) {
							t.Fatalf("%s n=%d: [%d,%d] = %g, matvec %g", f, n, i, r, g, one[r])
						}
						continue
					}
					_, mag := exactRef(p, w, &a, 0, r)
					if d := math.Abs(float64(one[r] - g)); d > 2*bound(f, cols)*0x1p-23*mag {
						t.Fatalf("%s n=%d: [%d,%d] = %g, matvec %g", f, n, i, r, g, one[r])
					}
				}
			}
		}
	}
}

// TestDecode checks the bit layouts on hand-built blocks against formats.md.
func TestDecode(t *testing.T) {
	one := []byte{0x00, 0x3c} // fp16 1.0
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	zeros := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		f    *quant.Format
		blk  []byte
		want map[int]float32
	}{
		// Q2_0: element j in byte j/4, bits 2(j%4); codes 0,1,2,3 → −1,0,1,2.
		{quant.Q2_0, cat(one, []byte{0b11_10_01_00}, zeros(31)), map[int]float32{0: -1, 1: 0, 2: 1, 3: 2, 4: -1}},
		{quant.Q2_0g64, cat(one, zeros(15), []byte{0b10 << 6}), map[int]float32{63: 1, 62: -1}},
		// Q1_0: bit j%8 of byte j/8; 1 → +d, 0 → −d.
		{quant.Q1_0, cat(one, []byte{0, 0b100}, zeros(14)), map[int]float32{10: 1, 9: -1}},
		// TQ2_0: element 128c+32l+m is byte 32c+m, bits 2l; d last.
		{quant.TQ2_0, cat(zeros(33), []byte{2 << 2}, zeros(30), one), map[int]float32{128 + 32 + 1: 1, 1: -1}},
		// Q4_0: low nibbles are elements 0..15, high nibbles 16..31.
		{quant.Q4_0, cat(one, []byte{0x9f}, zeros(15)), map[int]float32{0: 7, 16: 1, 1: -8}},
		{quant.Q8_0, cat(one, []byte{0xfe}, zeros(31)), map[int]float32{0: -2, 1: 0}},
		// Q6_K: ql[0] low nibble 5 and qh[0] bits 0–1 = 2 → q = 37−32 = 5,
		// scale[0] = 3, d = 1 → 15; element 64 uses ql[0]>>4 = 0, qh bits
		// 4–5 = 0 → −32·scale[4] = −64.
		{quant.Q6_K, cat([]byte{0x05}, zeros(127), []byte{0x02}, zeros(63), []byte{3, 0, 0, 0, 2}, zeros(11), one), map[int]float32{0: 5 * 3, 64: -32 * 2}},
		// Q4_K: d=1, dmin=1, sub-block 0 scale 2 min 1; qs[0] = 0x07 → 2·7−1.
		{quant.Q4_K, cat(one, one, []byte{2, 0, 0, 0, 1}, zeros(7), []byte{0x07}, zeros(127)), map[int]float32{0: 13, 32: 0}},
	}
	for _, tt := range tests {
		if len(tt.blk) != tt.f.BlockBytes {
			t.Fatalf("%s: test block has %d bytes", tt.f, len(tt.blk))
		}
		out := make([]float32, tt.f.BlockElems)
		decodeRow(tt.f, tt.blk, out)
		for j, v := range tt.want {
			if out[j] != v {
				t.Errorf("%s element %d = %g, want %g", tt.f, j, out[j], v)
			}
		}
	}
}

// encodeTrits packs trits (values 0..2) the way ggml's TQ1_0 quantizer
// does: most significant first, then a ceiling division by 243.
func encodeTrits(t []uint8) byte {
	q := 0
	for _, v := range t {
		q = q*3 + int(v)
	}
	for range 5 - len(t) {
		q *= 3
	}
	return byte((q*256 + 242) / 243)
}

// TestTritLayout builds TQ1_0 and PTQ1_0 blocks with an independent
// encoder of the documented element map and checks the decoder.
func TestTritLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tt := range []struct {
		f      *quant.Format
		widths [3]int
	}{{quant.TQ1_0, [3]int{32, 16, 4}}, {quant.PTQ1_0, [3]int{16, 8, 2}}} {
		be := tt.f.BlockElems
		want := make([]uint8, be)
		for i := range want {
			want[i] = uint8(rng.IntN(3))
		}
		blk := make([]byte, tt.f.BlockBytes)
		e, off := 0, 0
		for s, w := range tt.widths {
			nt := 5
			if s == 2 {
				nt = 4
			}
			for m := range w {
				var tr []uint8
				for n := range nt {
					tr = append(tr, want[e+w*n+m])
				}
				blk[off+m] = encodeTrits(tr)
			}
			e += w * nt
			off += w
		}
		binary.LittleEndian.PutUint16(blk[tt.f.BlockBytes-2:], 0x3c00)
		out := make([]float32, be)
		decodeRow(tt.f, blk, out)
		for j := range be {
			if out[j] != float32(want[j])-1 {
				t.Fatalf("%s element %d = %g, want %d", tt.f, j, out[j], int(want[j])-1)
			}
		}
	}
}

func TestQuantizeBlock(t *testing.T) {
	x := make([]float32, qk)
	x[0], x[1], x[2] = 2.54, -1.27, 0.005
	q := make([]int8, qk)
	d, s := quantizeBlock(q, x)
	if want := half.ToFloat32(half.FromFloat32(0.02)); d != want {
		t.Errorf("d = %g, want %g", d, want)
	}
	if q[0] != 127 || q[1] != -64 || q[2] != 0 || s != 63 {
		t.Errorf("q = %v, s = %d", q[:3], s)
	}
	d, s = quantizeBlock(q, make([]float32, qk))
	if d != 0 || s != 0 {
		t.Errorf("zero block: d = %g, s = %d", d, s)
	}
}

// nearestInt is ggml's nearest_int, written out with its float32 bit trick.
func nearestInt(f float32) int {
	v := f + 12582912
	return int(math.Float32bits(v)&0x007fffff) - 0x00400000
}

func TestQuantizeBlockK(t *testing.T) {
	tests := []struct {
		name  string
		x     map[int]float32 // others 0
		wantD float32
		wantQ map[int]int8
	}{
		// max is the signed value of largest |x|: −254 → iscale = 0.5, d = 2;
		// halves round to even.
		{"negative max", map[int]float32{0: -254, 1: 1, 2: 3, 3: -5, 4: 0.9}, 2, map[int]int8{0: -127, 1: 0, 2: 2, 3: -2, 4: 0}},
		// Positive max 63.5 → iscale = −2, d = −0.5.
		{"positive max", map[int]float32{7: 63.5, 8: 0.25, 9: 0.75, 10: -1.25}, -0.5, map[int]int8{7: -127, 8: 0, 9: -2, 10: 2}},
		// Of equal |x| the first wins.
		{"first of equal", map[int]float32{4: -3, 5: 3}, 1 / (-127 / float32(-3)), map[int]int8{4: -127, 5: 127}},
		{"zero", nil, 0, nil},
	}
	for _, tt := range tests {
		x := make([]float32, qkK)
		for j, v := range tt.x {
			x[j] = v
		}
		q := make([]int8, qkK)
		for i := range q {
			q[i] = 99 // must be overwritten
		}
		d := quantizeBlockK(q, x)
		if d != tt.wantD {
			t.Errorf("%s: d = %g, want %g", tt.name, d, tt.wantD)
		}
		for j, v := range x {
			want := int8(0)
			if d != 0 {
				want = int8(min(127, nearestInt(-127/x[slices.IndexFunc(x, func(v float32) bool {
					return float32(math.Abs(float64(v))) == maxAbs(x)
				})]*v)))
			}
			if w, ok := tt.wantQ[j]; ok && w != want {
				t.Fatalf("%s: table says q[%d] = %d, nearest_int %d", tt.name, j, w, want)
			}
			if q[j] != want {
				t.Errorf("%s: q[%d] = %d, want %d", tt.name, j, q[j], want)
			}
		}
	}
}

func maxAbs(x []float32) float32 {
	var m float32
	for _, v := range x {
		m = max(m, float32(math.Abs(float64(v))))
	}
	return m
}

// TestActPairing checks each format against its activation quantization
// as llama.cpp pairs them (vec_dot_type): Q8_K for TQ1_0, TQ2_0, Q4_K and
// Q6_K, Q8_0 for the others. The reference quantizes independently of the
// kernels' Acts, with the ggml reference quantizers written out here.
func TestActPairing(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	p := NewPool(2)
	defer p.Close()
	const cols = 512
	x := randActs(1, cols, rng)
	x8, xK := make([]float64, cols), make([]float64, cols)
	for b := 0; b < cols; b += qk {
		d := half.ToFloat32(half.FromFloat32(maxAbs(x[b:b+qk]) / 127))
		for j := b; j < b+qk; j++ {
			x8[j] = float64(d) * math.Round(float64(x[j]*(1/(maxAbs(x[b:b+qk])/127))))
		}
	}
	for b := 0; b < cols; b += qkK {
		blk := x[b : b+qkK]
		m := blk[slices.IndexFunc(blk, func(v float32) bool { return float32(math.Abs(float64(v))) == maxAbs(blk) })]
		is := -127 / m
		for j := b; j < b+qkK; j++ {
			xK[j] = float64(1/is) * float64(min(127, nearestInt(is*x[j])))
		}
	}
	for _, f := range []*quant.Format{quant.TQ1_0, quant.TQ2_0, quant.Q4_K, quant.Q6_K, quant.Q2_0, quant.Q1_0, quant.Q4_0, quant.Q8_0, quant.PTQ1_0} {
		xh := x8
		if f == quant.TQ1_0 || f == quant.TQ2_0 || f == quant.Q4_K || f == quant.Q6_K {
			xh = xK
		}
		w := randMatrix(t, f, 5, cols, rng)
		buf := make([]float32, cols)
		for _, name := range tiers() {
			restore, err := useTier(name)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, w.Rows)
			p.MatMul(got, w, x, 1)
			restore()
			for r := range w.Rows {
				w.Row(r, buf)
				var ref, mag float64
				for j, v := range buf {
					ref += float64(v) * xh[j]
					mag += math.Abs(float64(v) * xh[j])
				}
				if math.Abs(float64(got[r])-ref) > 1e-5*mag {
					t.Errorf("%s tier %s row %d: got %g, want %g", f, name, r, got[r], ref)
				}
			}
		}
	}
}

func TestRoundHalfAway(t *testing.T) {
	vals := []float32{0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, 1e-30, -1e-30,
		math.Nextafter32(0.5, 0), math.Nextafter32(-0.5, 0), math.Nextafter32(2.5, 0),
		math.Nextafter32(2.5, 3), math.Nextafter32(127.5, 0), 1 << 28, 1<<28 + 32}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 1000 {
		vals = append(vals, rng.Float32()*300-150, float32(rng.IntN(300)-150)+0.5)
	}
	for _, v := range vals {
		if got, want := roundHalfAway(v), math.Round(float64(v)); got != want {
			t.Errorf("roundHalfAway(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestNewMatrix(t *testing.T) {
	tests := []struct {
		f          *quant.Format
		rows, cols int
		size       int
		err        error
	}{
		{quant.Q2_0, 2, 256, 2 * 2 * 34, nil},
		{quant.Q2_0, 2, 256, 2*2*34 - 1, ErrShape},
		{quant.Q2_0, 2, 200, 0, ErrShape},
		{quant.Q2_0g64, 1, 64, 18, nil},
		{quant.F32, 3, 5, 60, nil},
		{quant.F32, 3, 0, 0, ErrShape},
		{quant.F32, -1, 4, 0, ErrShape},
		{&quant.Format{Name: "X", BlockElems: 1, BlockBytes: 1}, 1, 1, 1, ErrFormat},
		{nil, 1, 1, 1, ErrFormat},
	}
	for _, tt := range tests {
		_, err := NewMatrix(tt.f, tt.rows, tt.cols, make([]byte, tt.size))
		if !errors.Is(err, tt.err) {
			t.Errorf("NewMatrix(%v, %d, %d, %d bytes) = %v, want %v", tt.f, tt.rows, tt.cols, tt.size, err, tt.err)
		}
	}
}

func TestUseTier(t *testing.T) {
	if _, err := useTier("bogus"); err == nil {
		t.Error("useTier(bogus) succeeded")
	}
}

func TestPoolFor(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		if p.Threads() != threads {
			t.Errorf("Threads() = %d, want %d", p.Threads(), threads)
		}
		for _, n := range []int{0, 1, 2, 5, 100} {
			seen := make([]int, n)
			p.For(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("threads=%d n=%d: index %d visited %d times", threads, n, i, c)
				}
			}
		}
		p.Close()
	}
}

// FuzzTiers decodes arbitrary bytes as every format and checks that every
// tier agrees with the exact value within the TestTiers bound.
func FuzzTiers(f *testing.F) {
	f.Add(make([]byte, 66), int64(1))
	f.Add(make([]byte, 66), int64(-2))
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		p := NewPool(1)
		defer p.Close()
		rng := rand.New(rand.NewPCG(uint64(seed), 0))
		for _, fm := range quant.All {
			if fm.BlockElems == 1 || len(data) < fm.BlockBytes*2 {
				continue
			}
			blk := slices.Clone(data[:fm.BlockBytes*2])
			for b := 0; b < len(blk); b += fm.BlockBytes {
				for _, off := range scaleOffsets[fm] {
					// Keep scales finite so the bound is meaningful.
					if h := binary.LittleEndian.Uint16(blk[b+off:]); h&0x7c00 == 0x7c00 {
						binary.LittleEndian.PutUint16(blk[b+off:], h&^0x4000)
					}
				}
			}
			w, err := NewMatrix(fm, 1, 2*fm.BlockElems, blk)
			if err != nil {
				t.Fatal(err)
			}
			// One to four activation rows (the matrix-vector and few-row
			// kernels) or fewRows+1 to +4 (the GEMM, where a tier has one).
			n := 1 + int(uint64(seed)%4)
			if seed < 0 {
				n += fewRows
			}
			var a Acts
			p.Quantize(&a, randActs(n, w.Cols, rng), n, w.Cols)
			for _, name := range tiers() {
				restore, _ := useTier(name)
				dst := make([]float32, n)
				p.MatMulActs(dst, w, &a)
				restore()
				for i := range n {
					ref, mag := exactRef(p, w, &a, i, 0)
					if math.Abs(float64(dst[i])-ref) > bound(fm, w.Cols)*0x1p-23*mag+1e-30 {
						t.Fatalf("%s tier %s row %d of %d: got %g want %g", fm, name, i, n, dst[i], ref)
					}
				}
			}
		}
	})
}
