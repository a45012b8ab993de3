package ops

// MulAdd sets C += A·B for an m×k matrix A, a k×n matrix B and an m×n
// matrix C of float32. Row i of C starts at c[i*ldc] and row p of B at
// b[p*ldb]; element (i, p) of A is a[i*am+p*ak], so A may be read
// transposed (am = 1, ak = its row stride) without a copy. C must not
// overlap A or B. It panics if a stride is negative or a slice is too
// short for its matrix.
//
// The product runs in register tiles of four rows of C: each element of B
// loaded is used four times and each element of A sixteen or thirty-two
// times, where a loop of Dot or Axpy calls reloads both for every pair.
// Each C element is accumulated along p in order, with fused multiply-adds
// on the assembly paths and separate roundings in pure Go, so results
// differ between them by at most about k·2⁻²⁴·Σ|A·B| per element.
func MulAdd(c []float32, ldc int, a []float32, am, ak int, b []float32, ldb int, m, n, k int) {
	if ldc < 0 || am < 0 || ak < 0 || ldb < 0 || m < 0 || n < 0 || k < 0 {
		panic("ops: MulAdd: negative size or stride")
	}
	if m == 0 || n == 0 || k == 0 {
		return
	}
	if len(c) < (m-1)*ldc+n || len(a) < (m-1)*am+(k-1)*ak+1 || len(b) < (k-1)*ldb+n {
		panic("ops: MulAdd: slice too short")
	}
	i := 0
	for ; i+4 <= m; i += 4 {
		j := 0
		for _, t := range mulAddTiles() {
			for ; j+t.cols <= n; j += t.cols {
				t.f(&c[i*ldc+j], ldc, &a[i*am], am, ak, &b[j], ldb, k)
			}
		}
		if j < n {
			mulAddGeneric(c[i*ldc+j:], ldc, a[i*am:], am, ak, b[j:], ldb, 4, n-j, k)
		}
	}
	if i < m {
		mulAddGeneric(c[i*ldc:], ldc, a[i*am:], am, ak, b, ldb, m-i, n, k)
	}
}

// mulAddTile is an assembly kernel computing C += A·B for four rows of C
// and cols columns, with the arguments of MulAdd as pointers to the
// tile's first elements.
type mulAddTile struct {
	cols int
	f    func(c *float32, ldc int, a *float32, am, ak int, b *float32, ldb, k int)
}

// mulAddGeneric is MulAdd in plain Go, for every tier's edges and the
// purego build. It keeps four elements of a row of C in variables across
// the whole of k, so the loop does not store C after every multiply-add;
// each element is still accumulated along p in order, as in the tiles.
func mulAddGeneric(c []float32, ldc int, a []float32, am, ak int, b []float32, ldb int, m, n, k int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		j := 0
		for ; j+4 <= n; j += 4 {
			c0, c1, c2, c3 := ci[j], ci[j+1], ci[j+2], ci[j+3]
			ap, bp := i*am, j
			for range k {
				s, bv := a[ap], b[bp:bp+4:bp+4]
				c0 += s * bv[0]
				c1 += s * bv[1]
				c2 += s * bv[2]
				c3 += s * bv[3]
				ap += ak
				bp += ldb
			}
			ci[j], ci[j+1], ci[j+2], ci[j+3] = c0, c1, c2, c3
		}
		for ; j < n; j++ {
			cj := ci[j]
			for p := range k {
				cj += a[i*am+p*ak] * b[p*ldb+j]
			}
			ci[j] = cj
		}
	}
}

// MulAddTile returns the shape of MulAdd's register tiles on this CPU:
// products with m a multiple of rows and n a multiple of cols run in them
// alone, so a caller may pad its matrices with zeros to those multiples
// when that is cheaper than the plain-Go edges. It returns 1, 1 where
// there are no tiles (the purego build), and padding would only add work.
func MulAddTile() (rows, cols int) {
	t := mulAddTiles()
	if len(t) == 0 {
		return 1, 1
	}
	return 4, t[len(t)-1].cols
}

// ExpSub sets x[i] = e^(x[i]−m) and returns Σ x[i], accumulated in
// float64: the weights and the normaliser of a softmax whose maximum is m.
// The exponential is Softmax's, accurate to about one ulp; arguments below
// about −87.3 (−Inf included) give 0.
func ExpSub(x []float32, m float32) float64 {
	return active.expSubSum(x, m)
}
