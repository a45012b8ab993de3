package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"trit/gguf"
	"trit/store"
)

func init() {
	register(&command{
		name:  "pull",
		usage: "[--mmproj[=QUANT]] [--revision REV] REPO[:QUANT-or-FILE]",
		short: "download a model from the Hugging Face Hub into the model store",
		run:   runPull,
	})
	register(&command{
		name:  "list",
		usage: "[--json]",
		short: "list the pulled models",
		run:   runList,
	})
	register(&command{
		name:  "rm",
		usage: "NAME...",
		short: "remove pulled models",
		run:   runRm,
	})
}

// mmprojFlag is --mmproj (the default projector) or --mmproj=QUANT.
type mmprojFlag struct {
	on  bool
	sel string
}

func (f *mmprojFlag) String() string {
	if f == nil || !f.on {
		return ""
	}
	return f.sel
}

func (f *mmprojFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "true":
		f.on, f.sel = true, ""
	case "false":
		f.on, f.sel = false, ""
	default:
		f.on, f.sel = true, v
	}
	return nil
}

func (f *mmprojFlag) IsBoolFlag() bool { return true }

func runPull(args []string, stdout, stderr io.Writer) error {
	c := commands["pull"]
	fs := newFlags(c, stderr)
	var mm mmprojFlag
	var rev string
	fs.Var(&mm, "mmproj", "also pull the vision projector (--mmproj=QUANT picks one; default Q8_0)")
	fs.StringVar(&rev, "revision", "main", "branch, tag or commit to pull")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: trit pull %s\n\n%s.\n\n", c.usage, c.short)
		fmt.Fprint(stderr, `QUANT picks the GGUF file (case-insensitive: PQ2_0, ptq1_0, Q2_0_g64, ...);
without it the default is taken and named. A repository without GGUF files
(an MLX pack) is pulled whole. Files go to $TRIT_MODELS (default: trit/models
under the user cache directory); HF_TOKEN is sent for gated or private
repositories, HF_ENDPOINT selects another Hub. An interrupted pull resumes.

Examples:
	trit pull prism-ml/Ternary-Bonsai-8B-gguf:PQ2_0
	trit pull prism-ml/Ternary-Bonsai-2-27B-gguf:PTQ1_0 --mmproj
	trit pull prism-ml/Ternary-Bonsai-8B-mlx-2bit

Flags:
`)
		fs.PrintDefaults()
	}
	// Flags may follow the name too (trit pull REPO --mmproj).
	var names []string
	for rest := args; ; rest = fs.Args()[1:] {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
	}
	if len(names) != 1 {
		fs.Usage()
		return errUsage
	}
	st, err := openStore()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m, err := pullModel(ctx, st, names[0], store.PullOptions{Revision: rev, MMProj: mm.on, MMProjSel: mm.sel}, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pulled %s (%s): %s\n", m.Name(), humanBytes(m.Size()), m.Path())
	if !m.Pack {
		fmt.Fprintf(stdout, "run it: trit run -m %s \"Hello\"\n", m.Name())
	}
	return nil
}

// listed is one row of trit list.
type listed struct {
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	Format   string    `json:"format"`
	Quant    string    `json:"quant"`
	Arch     string    `json:"architecture"`
	LastUsed time.Time `json:"last_used"`
	Path     string    `json:"path"`
}

func runList(args []string, stdout, stderr io.Writer) error {
	c := commands["list"]
	fs := newFlags(c, stderr)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print the list as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	st, err := openStore()
	if err != nil {
		return err
	}
	models, err := st.List()
	if err != nil {
		return err
	}
	rows := make([]listed, 0, len(models))
	for _, m := range models {
		r := listed{Name: m.Name(), Size: m.Size(), LastUsed: m.LastUsed, Path: m.Path()}
		r.Format, r.Quant, r.Arch = describe(m)
		rows = append(rows, r)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(stderr, "no models in %s yet: trit pull REPO[:QUANT] fetches one, e.g. trit pull prism-ml/Ternary-Bonsai-8B-gguf\n", st.Dir)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIZE\tFORMAT\tQUANT\tARCH\tLAST USED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, humanBytes(r.Size), r.Format, r.Quant, r.Arch, ago(time.Since(r.LastUsed)))
	}
	return tw.Flush()
}

// describe reads the format, quant and architecture of a pulled model
// from its files: a GGUF header, or a pack's config.json.
func describe(m *store.Model) (format, quant, arch string) {
	if !m.Pack {
		format, quant, arch = "gguf", m.Tag, "?"
		f, err := gguf.Open(m.Path())
		if err != nil {
			return format, quant, "unreadable"
		}
		defer f.Close()
		if a, ok := f.String("general.architecture"); ok {
			arch = a
		}
		return format, quant, arch
	}
	format, quant, arch = "safetensors", "-", "?"
	data, err := os.ReadFile(filepath.Join(m.Path(), "config.json"))
	if err != nil {
		return format, quant, arch
	}
	var cfg struct {
		ModelType    string `json:"model_type"`
		Quantization *struct {
			Bits      int `json:"bits"`
			GroupSize int `json:"group_size"`
		} `json:"quantization"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return format, quant, arch
	}
	if cfg.ModelType != "" {
		arch = cfg.ModelType
	}
	if q := cfg.Quantization; q != nil {
		format, quant = "mlx", fmt.Sprintf("%d-bit g%d", q.Bits, q.GroupSize)
	}
	return format, quant, arch
}

// ago renders a duration since an event, coarsely.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func runRm(args []string, stdout, stderr io.Writer) error {
	c := commands["rm"]
	fs := newFlags(c, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	st, err := openStore()
	if err != nil {
		return err
	}
	for _, name := range fs.Args() {
		m, err := st.Remove(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s (%s)\n", m.Name(), humanBytes(m.Size()))
	}
	return nil
}
