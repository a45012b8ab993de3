package chat

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The Hermes tool-call tags used by Qwen models.
const (
	toolOpen  = "<tool_call>"
	toolClose = "</tool_call>"
)

// ParseToolCalls extracts the Hermes-style tool calls from a finished reply:
// blocks of the form <tool_call>{"name": …, "arguments": {…}}</tool_call>.
// The content is the rest of the text; whitespace around the calls is
// dropped. It is the same as running a ToolCallParser over text.
func ParseToolCalls(text string) (content string, calls []ToolCall) {
	var p ToolCallParser
	c, calls := p.Write(text)
	fc, fcalls := p.Flush()
	return c + fc, append(calls, fcalls...)
}

// tool-call parser states
const (
	tcContent = iota // ordinary text; a <tool_call> may start
	tcInCall         // inside a block, waiting for </tool_call>
	tcAfter          // just after a block, dropping whitespace
)

// A ToolCallParser finds tool calls in streamed model output. Text outside
// the calls is passed through as content as soon as it cannot be the start
// of a <tool_call> tag; each call is returned when its block closes.
//
// A block whose body is not a JSON object with a non-empty string "name"
// and an object (or string) "arguments" is not a tool call: it is passed
// through as content, tags included. So is a block still open at Flush.
// Whitespace between content and a call, between calls, and after the last
// call is dropped.
//
// The zero value is ready to use.
type ToolCallParser struct {
	state   int
	pending string
	gap     string // whitespace before the open block, restored if it is no call
}

// Write consumes the next chunk of output and returns the content that can
// be emitted now and the tool calls completed by this chunk. Returned calls
// have Type "function" and no ID; the caller assigns IDs.
func (p *ToolCallParser) Write(chunk string) (content string, calls []ToolCall) {
	buf := p.pending + chunk
	p.pending = ""
	var c strings.Builder
	for buf != "" {
		switch p.state {
		case tcContent:
			if i := strings.Index(buf, toolOpen); i >= 0 {
				text := strings.TrimRight(buf[:i], spaces)
				c.WriteString(text)
				p.gap = buf[len(text):i]
				p.state = tcInCall
				buf = buf[i+len(toolOpen):]
				continue
			}
			// Hold a partial opening tag and the whitespace before it.
			keep := len(strings.TrimRight(buf[:len(buf)-partialTag(buf, toolOpen)], spaces))
			c.WriteString(buf[:keep])
			p.pending = buf[keep:]
			buf = ""
		case tcInCall:
			i := strings.Index(buf, toolClose)
			if i < 0 {
				p.pending = buf
				buf = ""
				continue
			}
			body := buf[:i]
			buf = buf[i+len(toolClose):]
			if call, ok := parseCall(body); ok {
				calls = append(calls, call)
				p.state = tcAfter
			} else {
				c.WriteString(p.gap + toolOpen + body + toolClose)
				p.state = tcContent
			}
		case tcAfter:
			buf = trimLeftSpace(buf)
			if buf != "" {
				p.state = tcContent
			}
		}
	}
	return c.String(), calls
}

// Flush ends the stream and returns the held-back text as content: trailing
// whitespace, a partial tag, or an unclosed block. It returns no calls; the
// result has the same shape as Write's so callers can treat both alike.
func (p *ToolCallParser) Flush() (content string, calls []ToolCall) {
	rest := p.pending
	p.pending = ""
	switch p.state {
	case tcContent:
		return rest, nil
	case tcInCall:
		return p.gap + toolOpen + rest, nil
	}
	return "", nil
}

// parseCall decodes the JSON body of a <tool_call> block.
func parseCall(body string) (ToolCall, bool) {
	var v struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&v); err != nil || !isBlank(body[dec.InputOffset():]) || v.Name == nil || *v.Name == "" {
		return ToolCall{}, false
	}
	args := "{}"
	switch a := bytes.TrimSpace(v.Arguments); {
	case len(a) == 0 || string(a) == "null":
	case a[0] == '{':
		var buf bytes.Buffer
		if json.Compact(&buf, a) != nil {
			return ToolCall{}, false
		}
		args = buf.String()
	case a[0] == '"':
		if json.Unmarshal(a, &args) != nil {
			return ToolCall{}, false
		}
	default:
		return ToolCall{}, false
	}
	return ToolCall{Type: "function", Function: FunctionCall{Name: *v.Name, Arguments: args}}, true
}
