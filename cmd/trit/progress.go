package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
)

// A bar is the download progress of one file at a time: on a terminal a
// line redrawn a few times a second (bytes, percentage, rate, ETA);
// elsewhere (a log, a pipe) one line when a file starts and one when it
// ends.
type bar struct {
	w    io.Writer
	tty  bool
	now  func() time.Time
	name string
	size int64
	from int64 // bytes present when the file started
	have int64
	t0   time.Time
	last time.Time
	open bool // a redrawn line is on the terminal, without its newline
}

func newBar(w io.Writer) *bar { return &bar{w: w, tty: isTerminal(w), now: time.Now} }

// isTerminal reports whether w is a character device (not a file or a
// pipe) on a terminal that can redraw a line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// redrawEvery limits the redraws of a terminal line.
const redrawEvery = 200 * time.Millisecond

func (b *bar) Start(file string, have, size int64) {
	b.name, b.size, b.from, b.have = path.Base(file), size, have, have
	b.t0 = b.now()
	b.last = time.Time{}
	if b.tty {
		b.draw()
		return
	}
	if have > 0 {
		fmt.Fprintf(b.w, "trit: %s: %s of %s, resuming\n", b.name, humanBytes(have), humanBytes(size))
	} else {
		fmt.Fprintf(b.w, "trit: %s: %s\n", b.name, humanBytes(size))
	}
}

func (b *bar) Update(have int64) {
	b.have = have
	if b.tty && b.now().Sub(b.last) >= redrawEvery {
		b.draw()
	}
}

func (b *bar) Finish(err error) {
	if b.tty {
		b.draw()
		b.endLine()
	}
	if err == nil {
		el := b.now().Sub(b.t0)
		fmt.Fprintf(b.w, "trit: %s: done, %s in %v (%s/s), checksum verified\n",
			b.name, humanBytes(b.have-b.from), el.Round(time.Millisecond), humanBytes(b.rate(el)))
	}
}

// rate is the bytes per second received in this run.
func (b *bar) rate(el time.Duration) int64 {
	if el <= 0 {
		return 0
	}
	return int64(float64(b.have-b.from) / el.Seconds())
}

func (b *bar) draw() {
	b.last = b.now()
	el := b.last.Sub(b.t0)
	pct := 100.0
	if b.size > 0 {
		pct = 100 * float64(b.have) / float64(b.size)
	}
	const width = 24
	fill := int(pct / 100 * width)
	line := fmt.Sprintf("%s [%s%s] %5.1f%% %s / %s", b.name, strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
		pct, humanBytes(b.have), humanBytes(b.size))
	if r := b.rate(el); r > 0 && el >= time.Second {
		eta := time.Duration(float64(b.size-b.have) / float64(r) * float64(time.Second))
		line += fmt.Sprintf("  %s/s  ETA %v", humanBytes(r), eta.Round(time.Second))
	}
	// \r and erase-to-end redraw the line in place.
	fmt.Fprintf(b.w, "\r%s\x1b[K", line)
	b.open = true
}

// endLine ends a redrawn line, so that other output (a retry message)
// starts on a line of its own.
func (b *bar) endLine() {
	if b.open {
		fmt.Fprintln(b.w)
		b.open = false
	}
}
