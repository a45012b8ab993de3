package main

import (
	"fmt"
	"io"

	"trit/convert"
)

func init() {
	register(&command{
		name:  "convert",
		usage: "llama2c MODEL.bin TOKENIZER.bin OUT.gguf",
		short: "convert other model formats to GGUF (llama2.c checkpoints)",
		run:   runConvert,
	})
}

func runConvert(args []string, stdout, stderr io.Writer) error {
	c := commands["convert"]
	fs := newFlags(c, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	a := fs.Args()
	if len(a) == 0 {
		fs.Usage()
		return errUsage
	}
	switch a[0] {
	case "llama2c":
		if len(a) != 4 {
			fmt.Fprintln(stderr, "Usage: trit convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf")
			return errUsage
		}
		if err := convert.Llama2CFile(a[1], a[2], a[3]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", a[3])
		return nil
	}
	fmt.Fprintf(stderr, "trit convert: unknown source format %q (known: llama2c)\n", a[0])
	return errUsage
}
