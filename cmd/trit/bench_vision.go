package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"trit/bench"
	"trit/quant"
	"trit/vision"
)

// visionBenchOpts are the flags of trit bench's image-encoding mode.
type visionBenchOpts struct {
	mmproj, shapes, types string
	sizes                 intsFlag
}

// runVisionBench times image encoding on an mmproj file or synthetic
// towers of the real Bonsai 2 shape, next to the kernels' rate on the same
// matrix products.
func runVisionBench(o *benchOpts, v *visionBenchOpts, stdout, stderr io.Writer) error {
	type tower struct{ name, typ, path string }
	var towers []tower
	if v.mmproj != "" {
		towers = append(towers, tower{filepath.Base(v.mmproj), "file", v.mmproj})
	}
	if v.shapes != "" {
		if v.types == "" {
			v.types = "Q8_0,BF16"
		}
		for _, sn := range strings.Split(v.shapes, ",") {
			s := bench.VisionShapeByName(sn)
			if s == nil {
				var names []string
				for _, s := range bench.VisionShapes {
					names = append(names, s.Name)
				}
				return fmt.Errorf("unknown vision shape %q (known: %s)", sn, strings.Join(names, ", "))
			}
			for _, tn := range strings.Split(v.types, ",") {
				f := quant.ByName(tn)
				if f == nil {
					return fmt.Errorf("unknown type %q", tn)
				}
				dir, err := os.MkdirTemp(o.dir, "trit-bench-vision-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				path := filepath.Join(dir, "mmproj.gguf")
				fmt.Fprintf(stderr, "trit bench: writing synthetic %s %s tower\n", s.Name, f.Name)
				if err := bench.WriteVisionSyntheticFile(path, s, f, o.seed); err != nil {
					return err
				}
				towers = append(towers, tower{s.Name, f.Name, path})
			}
		}
	}
	fmt.Fprintln(stdout, "| tower | type | image | tokens | threads | encode (median) | GOP | GOP/s | kernels GOP/s | ratio |")
	fmt.Fprintln(stdout, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, tw := range towers {
		for _, th := range o.threads.v {
			t, err := vision.Load(tw.path, vision.Options{Threads: th})
			if err != nil {
				return err
			}
			for _, size := range v.sizes.v {
				r, err := bench.RunVision(t, size, o.reps)
				if err != nil {
					t.Close()
					return err
				}
				fmt.Fprintf(stdout, "| %s | %s | %d² | %d | %d | %.3f s | %.1f | %.1f | %.1f | %.0f%% |\n",
					tw.name, tw.typ, size, r.Tokens, th, r.Median().Seconds(), r.GOP, r.GOPS(), r.KernelGOPS(), 100*r.GOPS()/r.KernelGOPS())
			}
			t.Close()
		}
	}
	return nil
}
