package main

import (
	"encoding/json"
	"io"

	"trit/gguf"
	"trit/inspect"
	"trit/model/demo"
)

func init() {
	register(&command{
		name:  "inspect",
		usage: "[--json] FILE.gguf | --demo",
		short: "describe a GGUF file: architecture, tokenizer, tensors, bits per weight",
		run:   runInspect,
	})
}

func runInspect(args []string, stdout, stderr io.Writer) error {
	c := commands["inspect"]
	fs := newFlags(c, stderr)
	var asJSON, demoModel bool
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.BoolVar(&demoModel, "demo", false, "inspect the built-in demo model instead of a file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 && !(demoModel && fs.NArg() == 0) {
		fs.Usage()
		return errUsage
	}
	var f *gguf.File
	var err error
	if demoModel {
		f, err = demo.File()
	} else {
		f, err = gguf.Open(fs.Arg(0))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := inspect.New(f)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.WriteText(stdout)
}
