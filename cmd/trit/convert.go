package main

import (
	"fmt"
	"io"
	"strings"

	"trit/convert"
	"trit/model/checkpoint"
	"trit/quant"
)

func init() {
	register(&command{
		name: "convert",
		usage: "llama2c MODEL.bin TOKENIZER.bin OUT.gguf\n" +
			"       trit convert mlx IN.gguf OUTDIR [--allow-lossy]\n" +
			"       trit convert gguf DIR OUT.gguf [--type T] [--allow-lossy]\n" +
			"       trit convert hf DIR OUT.gguf [--type T] [--allow-lossy]",
		short: "convert between GGUF, MLX packs and Hugging Face checkpoints (and llama2.c checkpoints to GGUF)",
		run:   runConvert,
	})
}

// ternaryTypes are the --type values of trit convert gguf/hf.
var ternaryTypes = []string{"Q2_0", "Q2_0_g64", "PQ2_0", "PTQ1_0", "TQ2_0", "TQ1_0", "Q1_0", "F32", "F16", "BF16"}

func runConvert(args []string, stdout, stderr io.Writer) error {
	c := commands["convert"]
	fs := newFlags(c, stderr)
	typ := fs.String("type", "", "output layout of the matrices: "+strings.Join(ternaryTypes, ", ")+" (default: ternary ones keep the pack's, floats stay floats)")
	lossy := fs.Bool("allow-lossy", false, "convert even where values change, and report how many")
	// Flags may come after the positional arguments.
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) == 0 {
		fs.Usage()
		return errUsage
	}
	opt := convert.Options{AllowLossy: *lossy, Progress: stderr}
	switch pos[0] {
	case "llama2c":
		if len(pos) != 4 {
			fmt.Fprintln(stderr, "Usage: trit convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf")
			return errUsage
		}
		if err := convert.Llama2CFile(pos[1], pos[2], pos[3]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", pos[3])
		return nil
	case "mlx":
		if len(pos) != 3 {
			fmt.Fprintln(stderr, "Usage: trit convert mlx IN.gguf OUTDIR [--allow-lossy]")
			return errUsage
		}
		src, err := openSource(pos[1], stderr)
		if err != nil {
			return err
		}
		defer src.Close()
		rep, err := convert.ToMLX(src, pos[2], opt)
		return report(stdout, pos[2], rep, err)
	case "gguf", "hf":
		if len(pos) != 3 {
			fmt.Fprintf(stderr, "Usage: trit convert %s DIR OUT.gguf [--type T] [--allow-lossy]\n", pos[0])
			return errUsage
		}
		var f *quant.Format
		if *typ != "" {
			if f = quant.ByName(*typ); f == nil || !validType(*typ) {
				fmt.Fprintf(stderr, "trit convert: unknown --type %q (known: %s)\n", *typ, strings.Join(ternaryTypes, ", "))
				return errUsage
			}
		}
		src, err := checkpoint.Open(pos[1])
		if err != nil {
			return err
		}
		defer src.Close()
		rep, err := convert.ToGGUF(src, pos[2], f, opt)
		return report(stdout, pos[2], rep, err)
	}
	fmt.Fprintf(stderr, "trit convert: unknown source format %q (known: llama2c, mlx, gguf, hf)\n", pos[0])
	return errUsage
}

func validType(name string) bool {
	for _, t := range ternaryTypes {
		if t == name {
			return true
		}
	}
	return false
}

// report prints what a conversion did.
func report(w io.Writer, out string, rep *convert.Report, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %d tensors, %s\n", out, rep.Tensors, humanBytes(rep.Bytes))
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	if len(rep.Lossy) == 0 {
		fmt.Fprintln(w, "  lossless: every value kept")
	}
	for _, l := range rep.Lossy {
		fmt.Fprintln(w, "  changed:", l)
	}
	return nil
}
