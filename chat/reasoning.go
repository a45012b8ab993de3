package chat

import "strings"

// The reasoning tags of Qwen3 and Qwen3.5.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitReasoning separates a finished reply into its reasoning and its
// content. The reasoning is the text of a leading <think>…</think> block,
// trimmed of surrounding whitespace; the content is what follows, without
// its leading whitespace. A closing tag with no opening one counts too,
// because Qwen3.5 prompts open the block themselves; an opening tag that is
// never closed makes everything reasoning. Text with neither tag is all
// content, unchanged.
func SplitReasoning(text string) (reasoning, content string) {
	t := trimLeftSpace(text)
	opened := strings.HasPrefix(t, thinkOpen)
	if opened {
		t = t[len(thinkOpen):]
	}
	if i := strings.Index(t, thinkClose); i >= 0 {
		return strings.Trim(t[:i], spaces), trimLeftSpace(t[i+len(thinkClose):])
	}
	if opened {
		return strings.Trim(t, spaces), ""
	}
	return "", text
}

// reasoning parser states
const (
	rsStart      = iota // before anything: a <think> may still come
	rsLead              // inside the block, skipping leading whitespace
	rsReasoning         // inside the block
	rsAfterClose        // after </think>, skipping whitespace
	rsContent           // content until the end
)

// A ReasoningParser splits streamed model output into reasoning and content
// deltas, trimmed as SplitReasoning trims them. It works incrementally: it
// holds back only a possible partial tag and whitespace that may turn out to
// be the trimmed end of the reasoning. Unlike SplitReasoning it cannot look
// ahead for a closing tag, so a reply that does not open with <think> is
// content throughout unless StartInReasoning is set.
//
// The zero value expects the reply to open its own <think> block (Qwen3).
// Set StartInReasoning before the first Write when the prompt already opened
// it (Qwen3.5 and 3.6 with thinking on end the prompt with "<think>\n").
type ReasoningParser struct {
	// StartInReasoning says the output begins inside the reasoning block.
	StartInReasoning bool

	state   int
	started bool
	pending string
}

// Write consumes the next chunk of output and returns the reasoning and
// content that can be emitted now.
func (p *ReasoningParser) Write(chunk string) (reasoning, content string) {
	if !p.started {
		p.started = true
		if p.StartInReasoning {
			p.state = rsLead
		}
	}
	buf := p.pending + chunk
	p.pending = ""
	var r, c strings.Builder
	for buf != "" {
		switch p.state {
		case rsStart:
			rest := trimLeftSpace(buf)
			switch {
			case strings.HasPrefix(rest, thinkOpen):
				p.state = rsLead
				buf = rest[len(thinkOpen):]
			case strings.HasPrefix(thinkOpen, rest): // whitespace, maybe a partial tag
				p.pending = buf
				buf = ""
			default:
				p.state = rsContent
			}
		case rsLead, rsAfterClose:
			buf = trimLeftSpace(buf)
			if buf != "" {
				p.state++ // rsLead → rsReasoning, rsAfterClose → rsContent
			}
		case rsReasoning:
			if i := strings.Index(buf, thinkClose); i >= 0 {
				r.WriteString(strings.TrimRight(buf[:i], spaces))
				p.state = rsAfterClose
				buf = buf[i+len(thinkClose):]
				continue
			}
			// Hold a partial closing tag and the whitespace before it.
			keep := len(strings.TrimRight(buf[:len(buf)-partialTag(buf, thinkClose)], spaces))
			r.WriteString(buf[:keep])
			p.pending = buf[keep:]
			buf = ""
		case rsContent:
			c.WriteString(buf)
			buf = ""
		}
	}
	return r.String(), c.String()
}

// Flush ends the stream and returns what was held back: a partial tag that
// never completed. Whitespace at the end of unclosed reasoning is dropped.
func (p *ReasoningParser) Flush() (reasoning, content string) {
	rest := p.pending
	p.pending = ""
	switch p.state {
	case rsStart:
		return "", rest
	case rsReasoning:
		return strings.TrimRight(rest, spaces), ""
	}
	return "", ""
}

// spaces is the ASCII whitespace that the parsers trim, as C's isspace.
const spaces = " \t\n\v\f\r"

func trimLeftSpace(s string) string { return strings.TrimLeft(s, spaces) }

func isBlank(s string) bool { return trimLeftSpace(s) == "" }

// partialTag returns the length of the longest suffix of s that is a proper
// prefix of tag: text that must be held back until it is known whether the
// tag follows.
func partialTag(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasPrefix(tag, s[len(s)-n:]) {
			return n
		}
	}
	return 0
}
