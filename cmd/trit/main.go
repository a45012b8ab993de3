// Command trit runs ternary ("1.58-bit") language models stored in GGUF files.
//
// Usage:
//
//	trit <command> [flags] [arguments]
//
// Run "trit help" for the list of commands and "trit <command> -h" for the
// flags of one.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand of trit. Subcommands use the standard flag
// package: one FlagSet each, GNU-style "--name" accepted as well as "-name".
type command struct {
	name  string
	usage string // one-line argument synopsis
	short string // one-line description
	run   func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage reports bad command-line use; the message has been printed.
var errUsage = errors.New("usage")

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs trit with the given arguments and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				c.run([]string{"-h"}, stdout, stderr)
				return 0
			}
		}
		printHelp(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "trit: unknown command %q\n", args[0])
		printHelp(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "trit %s: %v\n", c.name, err)
		}
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "trit runs ternary (1.58-bit) language models.")
	fmt.Fprintln(w, "\nUsage:\n\n\ttrit <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "\t%-9s %s\n", n, commands[n].short)
	}
	fmt.Fprintln(w, "\nRun \"trit <command> -h\" for the flags of a command.")
}

// newFlags returns a FlagSet for command c whose usage message lists the
// synopsis and the flags.
func newFlags(c *command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("trit "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: trit %s %s\n\n%s\n\nFlags:\n", c.name, c.usage, c.short)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and maps a parse failure to errUsage (the flag
// package has already printed the problem and the usage).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}
