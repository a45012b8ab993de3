package perplexity

import (
	"math"
	"slices"

	"trit/logprob"
)

// KL compares a run with a saved base run, with llama-perplexity's
// --kl-divergence statistics. KL is KL(base ‖ this) in nats per token.
type KL struct {
	Positions int
	Mean      float64 // mean KL, ± MeanErr (standard error)
	MeanErr   float64
	Median    float64
	P99       float64
	P999      float64
	Max       float64
	// SameTop is the fraction of positions whose most likely token is the
	// base's, ± SameTopErr.
	SameTop, SameTopErr float64
	Base                Estimate // the base's perplexity on the same tokens
	// LogRatio is mean ln(PPL/PPL_base) ± LogRatioErr; Diff is PPL −
	// PPL_base ± DiffErr. Both errors count the two runs' correlation.
	LogRatio, LogRatioErr float64
	Diff, DiffErr         float64
	// RMSDeltaP is the RMS of p(next token) − p_base(next token).
	RMSDeltaP float64
}

// klAcc accumulates the KL statistics position by position.
type klAcc struct {
	base    nll
	cross   float64 // Σ nll·nll_base
	kl, kl2 float64
	dp2     float64
	same    int
	values  []float64
}

func newKLAcc(n int) *klAcc { return &klAcc{values: make([]float64, 0, n)} }

// PositionKL returns KL(base ‖ q) at one position, where q is the
// distribution of row (logits, normaliser lse), and whether the two agree
// on the most likely token. Only the base's top entries are seen: the rest
// of both distributions is folded into one "other" bucket, so with fewer
// than all entries this is a lower bound on the full KL, and exact with
// all of them. log-probabilities are rounded to float32 on both sides, as
// the file stores them, so a distribution compared with itself gives 0.
func PositionKL(rec *Record, row []float32, lse float64) (kl float64, sameTop bool) {
	var pIn, qIn float64
	for _, t := range rec.Top {
		lp, lq := float64(t.LogProb), float64(logprob.Of(row[t.ID], lse))
		p := math.Exp(lp)
		pIn += p
		qIn += math.Exp(lq)
		if p > 0 {
			kl += p * (lp - lq)
		}
	}
	if len(rec.Top) < len(row) {
		if pRest := 1 - pIn; pRest > 0 {
			kl += pRest * (math.Log(pRest) - math.Log(max(1-qIn, math.SmallestNonzeroFloat64)))
		}
	}
	var buf [1]logprob.Token
	top := logprob.Top(buf[:0], row, 1, lse)
	return kl, len(rec.Top) > 0 && top[0].ID == rec.Top[0].ID
}

func (a *klAcc) add(row []float32, lse float64, lp float32, base *Record) {
	kl, same := PositionKL(base, row, lse)
	nl, nb := -float64(lp), -float64(base.LogProb)
	a.base.add(nb)
	a.cross += nl * nb
	a.kl += kl
	a.kl2 += kl * kl
	if same {
		a.same++
	}
	dp := math.Exp(-nl) - math.Exp(-nb)
	a.dp2 += dp * dp
	a.values = append(a.values, kl)
}

// meanErr is llama-perplexity's mean and its standard error (0 with ten
// values or fewer).
func meanErr(sum, sum2 float64, n int) (float64, float64) {
	if n < 1 {
		return 0, 0
	}
	f := sum / float64(n)
	d := sum2/float64(n) - f*f
	if d > 0 && n > 10 {
		return f, math.Sqrt(d / float64(n-1))
	}
	return f, 0
}

// percentile interpolates linearly between the sorted values, as
// llama-perplexity does.
func percentile(v []float64, f float64) float64 {
	if f <= 0 {
		return v[0]
	}
	if f >= 1 {
		return v[len(v)-1]
	}
	p := f * float64(len(v)-1)
	i := int(p)
	p -= float64(i)
	return (1-p)*v[i] + p*v[min(i+1, len(v)-1)]
}

// result computes the statistics; the order statistics only when final
// (they sort every value).
func (a *klAcc) result(this *nll, final bool) *KL {
	n := this.n
	k := &KL{Positions: n}
	if n == 0 {
		return k
	}
	k.Mean, k.MeanErr = meanErr(a.kl, a.kl2, n)
	k.SameTop = float64(a.same) / float64(n)
	if n > 1 {
		k.SameTopErr = math.Sqrt(k.SameTop * (1 - k.SameTop) / float64(n-1))
	}
	k.RMSDeltaP = math.Sqrt(a.dp2 / float64(n))
	lq, lqErr := meanErr(this.sum, this.sum2, n)
	lb, lbErr := meanErr(a.base.sum, a.base.sum2, n)
	cov := 0.0
	if n >= 10 {
		cov = (a.cross/float64(n) - lq*lb) / float64(n-1)
	}
	k.Base = Estimate{PPL: math.Exp(lb), Err: math.Exp(lb) * lbErr}
	k.LogRatio = lq - lb
	k.LogRatioErr = math.Sqrt(max(0, lqErr*lqErr+lbErr*lbErr-2*cov))
	ppl, pplErr := math.Exp(lq), math.Exp(lq)*lqErr
	k.Diff = ppl - k.Base.PPL
	k.DiffErr = math.Sqrt(max(0, pplErr*pplErr+k.Base.Err*k.Base.Err-2*ppl*k.Base.PPL*cov))
	if final {
		v := slices.Clone(a.values)
		slices.Sort(v)
		if m := len(v); m%2 == 0 {
			k.Median = (v[m/2-1] + v[m/2]) / 2
		} else {
			k.Median = v[m/2]
		}
		k.P99, k.P999, k.Max = percentile(v, 0.99), percentile(v, 0.999), v[len(v)-1]
	}
	return k
}
