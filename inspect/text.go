package inspect

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as aligned, human-readable text.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }

	p("GGUF\tv%d, %s bytes, alignment %d, data at %s\n", r.Version, group(r.Size), r.Alignment, group(r.DataOffset))
	if r.Name != "" {
		p("name\t%s\n", r.Name)
	}
	p("architecture\t%s\n", orNone(r.Architecture))
	if r.FileType != nil {
		p("file type\t%d %s\n", *r.FileType, r.FileTypeName)
	}
	p("parameters\t%s in %d tensors, %.4f bits/weight, %.1f%% ternary\n",
		group(r.All.Elements), r.All.Tensors, r.All.Bits, 100*r.All.TernaryFraction)
	p("linear layers\t%s in %d tensors, %.4f bits/weight, %.1f%% ternary\n",
		group(r.Linear.Elements), r.Linear.Tensors, r.Linear.Bits, 100*r.Linear.TernaryFraction)

	if len(r.Hyperparameters) > 0 {
		p("\nhyperparameters\n")
		for _, h := range r.Hyperparameters {
			p("  %s\t%s\t%v\n", h.Key, h.Type, h.Value)
		}
	}

	if t := r.Tokenizer; t != nil {
		p("\ntokenizer\n")
		p("  model\t%s (pre %s)\n", orNone(t.Model), orNone(t.Pre))
		p("  vocabulary\t%s tokens, %s merges\n", group(int64(t.Tokens)), group(int64(t.Merges)))
		p("  special ids\tbos %s, eos %s, pad %s, unk %s\n", id(t.BOS), id(t.EOS), id(t.PAD), id(t.UNK))
		p("  add bos/eos\t%s / %s\n", flag(t.AddBOS), flag(t.AddEOS))
		if t.ChatTemplate > 0 {
			p("  chat template\t%s bytes\n", group(int64(t.ChatTemplate)))
		} else {
			p("  chat template\tnone\n")
		}
	}

	if h := r.Hadamard; h != nil {
		p("\nhadamard rotation\n")
		p("  version\t%d\n", h.Version)
		p("  block size\t%d\n", h.BlockSize)
		p("  transform\t%s, axis %s\n", orNone(h.Transform), orNone(h.Axis))
		p("  signs\t%s, widths %v, %d values\n", orNone(h.SignMode), h.SignWidths, h.SignValues)
		p("  rotated weights\t%d\n", h.WeightNames)
		p("  inverse weights\t%s\n", orNone(strings.Join(h.InverseNames, ", ")))
		p("  gdn_v_grouped\t%s\n", flag(h.GDNVGrouped))
	}

	p("\ntypes\ttensors\telements\tbytes\tbits/weight\n")
	for _, s := range r.Types {
		p("  %s\t%d\t%s\t%s\t%.4f\n", s.Type, s.Tensors, group(s.Elements), group(s.Bytes), s.Bits)
	}

	p("\ntensors\ttype\tshape\tbytes\n")
	for _, t := range r.Tensors {
		p("  %s\t%s\t%s\t%s\n", t.Name, t.Type, shape(t.Shape), group(t.Bytes))
	}

	if len(r.Warnings) > 0 {
		p("\nwarnings\n")
		for _, w := range r.Warnings {
			p("  %s\n", w)
		}
	}
	return tw.Flush()
}

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func shape(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func id(x *int64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatInt(*x, 10)
}

func flag(b *bool) string {
	if b == nil {
		return "-"
	}
	return strconv.FormatBool(*b)
}
