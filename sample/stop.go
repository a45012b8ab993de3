package sample

import "strings"

// A StopMatcher watches streamed text for stop strings. Write returns the
// part of the text that can be shown now; it holds back any tail that might
// still grow into a stop string. When a stop string completes, the text
// before it is released, the stop string and everything after it are
// dropped, and the matcher stays stopped.
//
// The outcome does not depend on how the text is split into chunks: the
// stream stops at the earliest point where any stop string is complete, and
// if several complete there, at the longest (earliest starting) one.
type StopMatcher struct {
	stops   []string
	held    string
	stopped bool
	matched string
}

// NewStopMatcher returns a matcher for the given stop strings. Empty strings
// are ignored; with none left, the matcher passes all text through.
func NewStopMatcher(stops ...string) *StopMatcher {
	m := &StopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, s)
		}
	}
	return m
}

// Write consumes the next chunk of generated text. It returns the text that
// may be emitted now and whether a stop string has matched (now or before).
// Once stopped, Write returns "", true.
func (m *StopMatcher) Write(chunk string) (emit string, stopped bool) {
	if m.stopped {
		return "", true
	}
	buf := m.held + chunk
	m.held = ""

	// Earliest end wins, then earliest start. Text that was held back cannot
	// contain a whole stop string, so the first occurrence of each string is
	// the only one that can win.
	start, end := -1, -1
	for _, s := range m.stops {
		i := strings.Index(buf, s)
		if i < 0 {
			continue
		}
		if e := i + len(s); end < 0 || e < end || (e == end && i < start) {
			start, end = i, e
			m.matched = s
		}
	}
	if start >= 0 {
		m.stopped = true
		return buf[:start], true
	}

	h := m.partial(buf)
	m.held = buf[len(buf)-h:]
	return buf[:len(buf)-h], false
}

// partial returns the length of the longest suffix of buf that is a proper
// prefix of some stop string. Any later match must start inside it.
func (m *StopMatcher) partial(buf string) int {
	best := 0
	for _, s := range m.stops {
		for n := min(len(s)-1, len(buf)); n > best; n-- {
			if strings.HasPrefix(s, buf[len(buf)-n:]) {
				best = n
				break
			}
		}
	}
	return best
}

// Flush ends the stream and returns the held-back text, which turned out
// not to be the start of a stop string. It returns "" after a stop.
func (m *StopMatcher) Flush() string {
	h := m.held
	m.held = ""
	if m.stopped {
		return ""
	}
	return h
}

// Stopped reports whether a stop string has matched.
func (m *StopMatcher) Stopped() bool { return m.stopped }

// Matched returns the stop string that ended the stream, or "".
func (m *StopMatcher) Matched() string { return m.matched }

// Reset clears the matcher for a new stream with the same stop strings.
func (m *StopMatcher) Reset() {
	m.held, m.stopped, m.matched = "", false, ""
}
