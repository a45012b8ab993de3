package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"trit/chat"
)

// Anthropic Messages API: POST /v1/messages and /v1/messages/count_tokens.

// anthropicRequest is the body of POST /v1/messages.
type anthropicRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	System        anthropicContent   `json:"system"`
	Messages      []anthropicMessage `json:"messages"`
	Tools         []anthropicTool    `json:"tools"`
	ToolChoice    *anthropicChoice   `json:"tool_choice"`
	StopSequences stopList           `json:"stop_sequences"`
	Temperature   *float64           `json:"temperature"`
	TopP          *float64           `json:"top_p"`
	TopK          *int               `json:"top_k"`
	Stream        bool               `json:"stream"`
	Thinking      *struct {
		Type         string `json:"type"` // "enabled", "disabled" or "adaptive"
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content anthropicContent `json:"content"`
}

type anthropicTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicChoice struct {
	Type string `json:"type"` // auto, any, tool, none
	Name string `json:"name"`
}

// anthropicBlock is a content block of a request.
type anthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text"`
	Thinking  string           `json:"thinking"`
	ID        string           `json:"id"`
	Name      string           `json:"name"`
	Input     json.RawMessage  `json:"input"`
	ToolUseID string           `json:"tool_use_id"`
	Content   anthropicContent `json:"content"` // a tool_result's
	IsError   bool             `json:"is_error"`
}

// anthropicContent is content: a string or an array of blocks.
type anthropicContent []anthropicBlock

func (c *anthropicContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if s, ok, err := jsonText(b); ok {
		*c = nil
		if string(b) != "null" {
			*c = anthropicContent{{Type: "text", Text: s}}
		}
		return err
	}
	switch {
	case len(b) > 0 && b[0] == '[':
		var blocks []anthropicBlock
		if err := json.Unmarshal(b, &blocks); err != nil {
			return fieldErr("content", "content blocks must be objects: %v", err)
		}
		if len(blocks) > maxContentPart {
			return fieldErr("content", "more than %d content blocks", maxContentPart)
		}
		*c = blocks
		return nil
	}
	return fieldErr("content", "content must be a string or an array of content blocks")
}

// text joins the text blocks; other blocks are refused.
func (c anthropicContent) text(param string) (string, error) {
	var parts []string
	for i, b := range c {
		if b.Type != "text" {
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, i), "content block type %q is not supported here (text only)", b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// request translates a Messages request.
func (a *anthropicRequest) request() (*genRequest, error) {
	if a.MaxTokens == nil {
		return nil, badRequest("max_tokens", "max_tokens is required")
	}
	if len(a.Messages) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty array")
	}
	if len(a.Messages) > maxMessages {
		return nil, badRequest("messages", "more than %d messages", maxMessages)
	}
	var msgs []chat.Message
	if len(a.System) > 0 {
		sys, err := a.System.text("system")
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, chat.Message{Role: "system", Content: sys})
	}
	for i, m := range a.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "user", "assistant":
		default:
			return nil, badRequest(param+".role", "unknown role %q (user or assistant)", m.Role)
		}
		out := chat.Message{Role: m.Role}
		var text []string
		for k, b := range m.Content {
			bp := fmt.Sprintf("%s.content[%d]", param, k)
			switch {
			case b.Type == "text":
				text = append(text, b.Text)
			case b.Type == "thinking" && m.Role == "assistant":
				out.ReasoningContent += b.Thinking
			case b.Type == "redacted_thinking" && m.Role == "assistant":
				// Opaque to anyone but its issuer: nothing to render.
			case b.Type == "tool_use" && m.Role == "assistant":
				args := bytes.TrimSpace(b.Input)
				if len(args) == 0 || string(args) == "null" {
					args = []byte("{}")
				}
				if args[0] != '{' {
					return nil, badRequest(bp+".input", "tool_use input must be an object")
				}
				out.ToolCalls = append(out.ToolCalls, chat.ToolCall{ID: b.ID, Type: "function",
					Function: chat.FunctionCall{Name: b.Name, Arguments: string(args)}})
			case b.Type == "tool_result" && m.Role == "user":
				res, err := b.Content.text(bp + ".content")
				if err != nil {
					return nil, err
				}
				if b.IsError {
					res = "Error: " + res
				}
				msgs = append(msgs, chat.Message{Role: "tool", Content: res, ToolCallID: b.ToolUseID})
			default:
				return nil, badRequest(bp+".type", "content block type %q is not supported in a %s message", b.Type, m.Role)
			}
		}
		out.Content = strings.Join(text, "\n")
		if m.Role == "user" && out.Content == "" && len(m.Content) > 0 {
			continue // only tool results
		}
		msgs = append(msgs, out)
	}
	req := &genRequest{messages: msgs, promptParam: "messages", clampMax: true, sampling: samplingFields{
		MaxTokens: a.MaxTokens, Stop: a.StopSequences, Temperature: a.Temperature, TopP: a.TopP, TopK: a.TopK,
	}}
	if *a.MaxTokens < 1 {
		return nil, badRequest("max_tokens", "max_tokens is %d; it must be at least 1", *a.MaxTokens)
	}
	// Without a thinking field the template's default holds, as on the
	// other APIs: a model trained to think does.
	if t := a.Thinking; t != nil {
		on := t.Type != "disabled"
		switch t.Type {
		case "enabled", "adaptive", "disabled":
			req.thinking = &on
		default:
			return nil, badRequest("thinking.type", "unknown thinking type %q (enabled or disabled)", t.Type)
		}
	}
	if len(a.Tools) > maxTools {
		return nil, badRequest("tools", "more than %d tools", maxTools)
	}
	tools := a.Tools
	if tc := a.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto", "any":
		case "tool":
			if tc.Name == "" {
				return nil, badRequest("tool_choice.name", "tool_choice type tool needs a name")
			}
		case "none":
			tools = nil
		default:
			return nil, badRequest("tool_choice.type", "unknown tool_choice type %q (auto, any, tool or none)", tc.Type)
		}
	}
	for i, t := range tools {
		if t.Name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d].name", i), "a tool needs a name")
		}
		if t.Type != "" && t.Type != "custom" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported (client tools only)", t.Type)
		}
		ft, err := functionTool(t.Name, t.Description, t.InputSchema, fmt.Sprintf("tools[%d].input_schema", i))
		if err != nil {
			return nil, err
		}
		req.tools = append(req.tools, ft)
	}
	return req, nil
}

// Response shapes of the Messages API.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// anthropicOut is an output content block.
type anthropicOut struct {
	Type      string           `json:"type"`
	Text      *string          `json:"text,omitempty"`
	Thinking  *string          `json:"thinking,omitempty"`
	Signature *string          `json:"signature,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     *json.RawMessage `json:"input,omitempty"`
}

type anthropicMessageOut struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []anthropicOut `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

// anthropicBlockOut renders b; whole: with its full text (else empty, as
// a stream's content_block_start has it).
func anthropicBlockOut(b *block, whole bool) anthropicOut {
	text := ""
	if whole {
		text = b.text
	}
	switch b.kind {
	case blockThinking:
		// No signature: nothing here is signed, and clients only echo it.
		sig := ""
		return anthropicOut{Type: "thinking", Thinking: &text, Signature: &sig}
	case blockTool:
		in := json.RawMessage("{}")
		if whole {
			in = argsObject(b.text)
		}
		return anthropicOut{Type: "tool_use", ID: "toolu_" + strings.TrimPrefix(b.call.ID, "call_"), Name: b.call.Function.Name, Input: &in}
	}
	return anthropicOut{Type: "text", Text: &text}
}

// anthropicStop maps how a generation ended to a stop_reason.
func anthropicStop(res result, calls int) (reason string, seq *string) {
	switch {
	case res.finish == "length":
		return "max_tokens", nil
	case res.stopWord != "":
		return "stop_sequence", &res.stopWord
	case calls > 0:
		return "tool_use", nil
	}
	return "end_turn", nil
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req anthropicRequest
	g := s.begin(w, r, b, &req)
	if g == nil {
		return
	}
	msg := anthropicMessageOut{ID: newID("msg_"), Type: "message", Role: "assistant", Model: b.ModelID,
		Content: []anthropicOut{}, Usage: anthropicUsage{InputTokens: g.promptN}}
	var l blockList
	if !req.Stream {
		res, ok := g.whole(w, r, l.add)
		if !ok {
			return
		}
		for i := range l.blocks {
			msg.Content = append(msg.Content, anthropicBlockOut(&l.blocks[i], true))
		}
		reason, seq := anthropicStop(res, l.calls())
		msg.StopReason, msg.StopSequence = &reason, seq
		msg.Usage.OutputTokens = res.predictedN
		writeJSON(w, http.StatusOK, msg)
		return
	}
	sse := newSSE(w)
	if sse.event("message_start", map[string]any{"type": "message_start", "message": msg}) != nil {
		return
	}
	type deltaBody struct {
		Type        string  `json:"type"`
		Text        *string `json:"text,omitempty"`
		Thinking    *string `json:"thinking,omitempty"`
		PartialJSON *string `json:"partial_json,omitempty"`
	}
	l.emit = func(ev blockEvent, i int, text string) error {
		b := &l.blocks[i]
		switch ev {
		case blockStart:
			return sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": anthropicBlockOut(b, false)})
		case blockStop:
			return sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		}
		d := deltaBody{Type: "text_delta", Text: &text}
		switch b.kind {
		case blockThinking:
			d = deltaBody{Type: "thinking_delta", Thinking: &text}
		case blockTool:
			d = deltaBody{Type: "input_json_delta", PartialJSON: &text}
		}
		return sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	res, ok := g.each(r, l.add)
	if !ok || l.close() != nil {
		return
	}
	if res.err != nil {
		ae := asAPIError(jobError(res.err))
		sse.event("error", ae.styled(styleAnthropic))
		return
	}
	reason, seq := anthropicStop(res, l.calls())
	if sse.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
		"usage": map[string]int{"input_tokens": g.promptN, "output_tokens": res.predictedN}}) != nil {
		return
	}
	sse.event("message_stop", map[string]string{"type": "message_stop"})
}

// anthropicCountTokens is POST /v1/messages/count_tokens: the prompt's
// size as the model's template and tokenizer make it.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req anthropicRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	one := 1
	if req.MaxTokens == nil {
		req.MaxTokens = &one // not part of this request
	}
	gr, err := req.request()
	if err != nil {
		writeError(w, err)
		return
	}
	enc, err := s.encode(r, b, gr)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": len(enc.ids)})
}
