package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at link time for releases (-ldflags "-X main.version=...").
var version = "devel"

func init() {
	register(&command{
		name:  "version",
		usage: "",
		short: "print the trit version and build information",
		run:   runVersion,
	})
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	c := commands["version"]
	fs := newFlags(c, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(stdout, "trit %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
