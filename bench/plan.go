package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseInts parses a llama-bench-style comma list of non-negative
// integers ("512", "1,2", "4096,32768").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bench: %q is not a list of non-negative integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// Plan lists the measurements of one model, llama-bench style: a pp test
// for each positive prompt length and a tg test for each positive
// generation length, at each depth, and, with Ctxs, at each context size.
type Plan struct {
	Prompts, Gens []int
	// Depths are the cache fills before each test. With Ctxs and no
	// Depths, each test fills the context to its end (Ctx minus the test's
	// tokens), but never more than MaxFill tokens: filling 131072 tokens by
	// real prefill takes hours on a small CPU.
	Depths  []int
	Ctxs    []int
	MaxFill int
}

// Item is one planned test and the state capacity it runs with (0: just
// enough).
type Item struct {
	Test Test
	Ctx  int
}

// Items expands the plan. It fails when a depth does not fit a context.
func (p Plan) Items() ([]Item, error) {
	var kinds []Test
	for _, n := range p.Prompts {
		if n > 0 {
			kinds = append(kinds, Test{Prompt: n})
		}
	}
	for _, n := range p.Gens {
		if n > 0 {
			kinds = append(kinds, Test{Gen: n})
		}
	}
	ctxs := p.Ctxs
	if len(ctxs) == 0 {
		ctxs = []int{0}
	}
	var items []Item
	for _, ctx := range ctxs {
		for _, k := range kinds {
			depths := p.Depths
			if len(depths) == 0 {
				depths = []int{0}
				if ctx > 0 {
					depths[0] = max(0, min(ctx-k.tokens(), p.MaxFill))
				}
			}
			for _, d := range depths {
				t := k
				t.Depth = d
				if ctx > 0 && d+t.tokens() > ctx {
					return nil, fmt.Errorf("%w: %s does not fit a context of %d", ErrTest, t.Name(), ctx)
				}
				items = append(items, Item{Test: t, Ctx: ctx})
			}
		}
	}
	return items, nil
}
