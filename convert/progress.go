package convert

import (
	"fmt"
	"io"
)

// progressWriter counts bytes written to w and prints a percentage to out
// every 5 % when total is over 64 MiB (out nil: no progress).
func progressWriter(w io.Writer, total int64, out io.Writer) io.Writer {
	if out == nil || total < 64<<20 {
		return w
	}
	return &progress{w: w, total: total, out: out, last: -1}
}

type progress struct {
	w        io.Writer
	out      io.Writer
	n, total int64
	last     int
}

func (p *progress) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if pct := int(min(p.n*100/p.total, 100)); pct/5 != p.last/5 {
		p.last = pct
		fmt.Fprintf(p.out, "\rtrit: writing %3d%%", pct)
		if pct == 100 {
			fmt.Fprintln(p.out)
		}
	}
	return n, err
}
