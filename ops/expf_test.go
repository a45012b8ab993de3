package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulpDiff returns how many float32 steps separate got from the correctly
// rounded want.
func ulpDiff(got float32, want float64) float64 {
	w := float32(want)
	ulp := math.Abs(float64(math.Nextafter32(w, float32(math.Inf(1))) - w))
	return math.Abs(float64(got)-want) / ulp
}

func TestExpf(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	xs := []float32{0, -0.0, 1, -1, 0.5, 1e-8, -1e-8, 10, -10, 50, -50, 87, -87, 88.37, -87.33,
		expHi, expLo, math.Nextafter32(expLo, 0)}
	for range 100000 {
		xs = append(xs, float32(r.Float64()*(expHi-expLo)+expLo))
	}
	var worst float64
	for _, x := range xs {
		got := expf(x)
		d := ulpDiff(got, math.Exp(float64(x)))
		worst = max(worst, d)
		if d > 2 {
			t.Fatalf("expf(%v) = %v, want %v (%.1f ulp)", x, got, math.Exp(float64(x)), d)
		}
	}
	t.Logf("worst error %.2f ulp", worst)
	special := map[float32]float32{
		float32(math.Inf(-1)):          0,
		-100:                           0,
		math.Nextafter32(expLo, -1000): 0,
		float32(math.Inf(1)):           float32(math.Inf(1)),
		1000:                           float32(math.Inf(1)),
		math.Nextafter32(expHi, 1000):  float32(math.Inf(1)),
	}
	for x, want := range special {
		if got := expf(x); got != want {
			t.Errorf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if math.IsInf(float64(expf(expHi)), 0) {
		t.Error("expf(expHi) overflowed")
	}
	if got := expf(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %v", got)
	}
}
