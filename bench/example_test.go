package bench_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"trit/bench"
	"trit/model"
	_ "trit/model/llama" // registers qwen3
	"trit/quant"
)

// Write a synthetic model of the tiny test shape, load it like any GGUF
// file and measure generation speed the way llama-bench does.
func Example() {
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	shape := bench.ShapeByName("tiny")
	if err := bench.WriteSyntheticFile(path, shape, bench.Types{Weight: quant.TQ2_0}, 1); err != nil {
		log.Fatal(err)
	}
	m, err := model.Load(path, model.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	r, err := bench.Run(m, bench.Test{Gen: 16}, bench.Config{Reps: 3})
	if err != nil {
		log.Fatal(err)
	}
	tps, _ := r.TokensPerSec()
	fmt.Printf("%s: %d samples, context %d, positive rate %v\n", r.Test.Name(), len(r.Samples), r.Ctx, tps > 0)
	fmt.Printf("%s has %d parameters\n", shape.Name, shape.Params())
	// Output:
	// tg16: 3 samples, context 16, positive rate true
	// tiny has 1312256 parameters
}
