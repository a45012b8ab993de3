package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"trit/model"
	"trit/quant"
)

func init() {
	register(&command{
		name:  "logits",
		usage: "-m MODEL --ids 1,2,3 [--mode batch|sequential] [--json]",
		short: "print the logits the model computes for given token ids",
		run:   runLogits,
	})
}

func runLogits(args []string, stdout, stderr io.Writer) error {
	c := commands["logits"]
	fs := newFlags(c, stderr)
	var mf modelFlags
	// Reference runs (llama.cpp's included) keep the cache in float32.
	mf.registerCache(fs, quant.F32)
	var idsFlag, mode string
	var asJSON bool
	var top int
	fs.StringVar(&idsFlag, "ids", "", "comma-separated token ids")
	fs.StringVar(&mode, "mode", "batch", "batch (all ids in one forward pass) or sequential (one at a time)")
	fs.BoolVar(&asJSON, "json", false, "print the logits as JSON (the layout of the reference files)")
	fs.IntVar(&top, "top", 5, "without --json: the top entries printed per position")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if idsFlag == "" {
		fmt.Fprintln(stderr, "trit logits: --ids is required")
		return errUsage
	}
	var ids []int
	for _, s := range strings.Split(idsFlag, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--ids: %q is not an integer", s)
		}
		ids = append(ids, v)
	}
	l, err := mf.load(stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	d, err := model.ComputeLogits(l.eng.Model, ids, mode)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(d)
	}
	for i, lg := range d.Logits {
		fmt.Fprintf(stdout, "pos %d id %d:", i, ids[i])
		for _, j := range topK(lg, top) {
			fmt.Fprintf(stdout, " %d(%s)=%.4f", j, strconv.Quote(l.eng.Tok.Token(j)), lg[j])
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// topK returns the indices of the k largest values, largest first.
func topK(x []float32, k int) []int {
	var idx []int
	for i := range x {
		j := len(idx)
		for j > 0 && x[idx[j-1]] < x[i] {
			j--
		}
		if j < k {
			idx = append(idx, 0)
			copy(idx[j+1:], idx[j:])
			idx[j] = i
			if len(idx) > k {
				idx = idx[:k]
			}
		}
	}
	return idx
}
