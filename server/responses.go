package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"trit/chat"
	"trit/vision"
)

// OpenAI's Responses API, stateless: POST /v1/responses with the whole
// conversation in input. Nothing is stored, so previous_response_id is
// refused.

type responsesRequest struct {
	Model              string          `json:"model"`
	Input              responsesInput  `json:"input"`
	Instructions       string          `json:"instructions"`
	Tools              []responsesTool `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
	Conversation       json.RawMessage `json:"conversation"`
	Reasoning          *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
	Text *struct {
		Format *struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// responsesItem is an input item: a message, a function call of an
// earlier turn, a function's output, or earlier reasoning.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responsesInput is input: a string (one user message) or items.
type responsesInput []responsesItem

func (in *responsesInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		c, _ := json.Marshal(s)
		*in = responsesInput{{Type: "message", Role: "user", Content: c}}
		return nil
	}
	var items []responsesItem
	if err := json.Unmarshal(b, &items); err != nil {
		return fieldErr("input", "input must be a string or an array of input items")
	}
	if len(items) > maxMessages {
		return fieldErr("input", "more than %d input items", maxMessages)
	}
	*in = items
	return nil
}

// itemText reads message content: a string or text parts.
func itemText(raw json.RawMessage, param string) (string, error) {
	var c content
	if err := json.Unmarshal(raw, &c); err != nil {
		if fe, ok := err.(*fieldError); ok {
			return "", badRequest(param, "%s", fe.msg)
		}
		return "", badRequest(param, "content must be a string or an array of text parts")
	}
	if len(c.images) > 0 {
		return "", badRequest(param, "image parts are not supported on this endpoint: send images through /v1/chat/completions")
	}
	return strings.ReplaceAll(c.text, vision.Marker, ""), nil
}

// request translates a Responses request.
func (q *responsesRequest) request() (*genRequest, error) {
	if q.PreviousResponseID != "" {
		return nil, badRequest("previous_response_id",
			"previous_response_id needs stored responses, and this server stores none: send the whole conversation in input")
	}
	if c := bytes.TrimSpace(q.Conversation); len(c) > 0 && string(c) != "null" {
		return nil, badRequest("conversation", "conversations need stored state, and this server stores none: send the whole conversation in input")
	}
	if len(q.Input) == 0 {
		return nil, badRequest("input", "input is required")
	}
	var msgs []chat.Message
	if q.Instructions != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: q.Instructions})
	}
	reasoning := ""
	// lastAssistant returns the assistant message to add a call to.
	lastAssistant := func() *chat.Message {
		if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
			return &msgs[n-1]
		}
		msgs = append(msgs, chat.Message{Role: "assistant", ReasoningContent: reasoning})
		reasoning = ""
		return &msgs[len(msgs)-1]
	}
	for i, it := range q.Input {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "message", "":
			role := it.Role
			switch role {
			case "user", "assistant", "system":
			case "developer":
				role = "system"
			default:
				return nil, badRequest(param+".role", "unknown role %q", it.Role)
			}
			text, err := itemText(it.Content, param+".content")
			if err != nil {
				return nil, err
			}
			m := chat.Message{Role: role, Content: text}
			if role == "assistant" {
				m.ReasoningContent, reasoning = reasoning, ""
			}
			msgs = append(msgs, m)
		case "reasoning":
			var r struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(it.Content, &r.Content) // reasoning text, if the client kept it
			for _, c := range r.Content {
				reasoning += c.Text
			}
		case "function_call":
			if it.Name == "" {
				return nil, badRequest(param+".name", "a function_call item needs a name")
			}
			m := lastAssistant()
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: it.CallID, Type: "function",
				Function: chat.FunctionCall{Name: it.Name, Arguments: it.Arguments}})
		case "function_call_output":
			out, err := itemText(it.Output, param+".output")
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, chat.Message{Role: "tool", Content: out, ToolCallID: it.CallID})
		default:
			return nil, badRequest(param+".type", "input item type %q is not supported", it.Type)
		}
	}
	req := &genRequest{messages: msgs, promptParam: "input", maxParam: "max_output_tokens", sampling: samplingFields{
		MaxTokens: q.MaxOutputTokens, Temperature: q.Temperature, TopP: q.TopP}}
	if r := q.Reasoning; r != nil {
		switch r.Effort {
		case "":
		case "none", "minimal":
			off := false
			req.thinking = &off
		case "low", "medium", "high", "xhigh":
			on := true
			req.thinking = &on
		default:
			return nil, badRequest("reasoning.effort", "unknown reasoning effort %q", r.Effort)
		}
	}
	if t := q.Text; t != nil && t.Format != nil {
		switch t.Format.Type {
		case "", "text":
		case "json_object", "json_schema":
			req.json = true
		default:
			return nil, badRequest("text.format.type", "unknown text format type %q (text, json_object or json_schema)", t.Format.Type)
		}
	}
	if len(q.Tools) > maxTools {
		return nil, badRequest("tools", "more than %d tools", maxTools)
	}
	if tc := bytes.TrimSpace(q.ToolChoice); string(tc) == `"none"` {
		return req, nil
	}
	for i, t := range q.Tools {
		if t.Type != "function" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported (function only)", t.Type)
		}
		if t.Name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d].name", i), "a function tool needs a name")
		}
		ft, err := functionTool(t.Name, t.Description, t.Parameters, fmt.Sprintf("tools[%d].parameters", i))
		if err != nil {
			return nil, err
		}
		req.tools = append(req.tools, ft)
	}
	return req, nil
}

// Response shapes.
type responsesPart struct {
	Type        string    `json:"type"` // output_text, reasoning_text
	Text        string    `json:"text"`
	Annotations *[]string `json:"annotations,omitempty"`
}

type responsesOutItem struct {
	Type      string          `json:"type"` // message, reasoning, function_call
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Role      string          `json:"role,omitempty"`
	Content   []responsesPart `json:"content,omitempty"`
	Summary   *[]string       `json:"summary,omitempty"` // reasoning: always empty
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments *string         `json:"arguments,omitempty"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type responsesObject struct {
	ID                string    `json:"id"`
	Object            string    `json:"object"`
	CreatedAt         int64     `json:"created_at"`
	Status            string    `json:"status"`
	Error             *struct{} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	MaxOutputTokens   *int               `json:"max_output_tokens"`
	Model             string             `json:"model"`
	Output            []responsesOutItem `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Temperature       *float64           `json:"temperature"`
	TopP              *float64           `json:"top_p"`
	ToolChoice        json.RawMessage    `json:"tool_choice"`
	Tools             []responsesTool    `json:"tools"`
	Store             bool               `json:"store"`
	Usage             *responsesUsage    `json:"usage"`
}

// responsesItemOut renders block i; whole: with its text (else as a
// stream announces it).
func responsesItemOut(b *block, whole bool) responsesOutItem {
	status, text := "in_progress", ""
	if whole {
		status, text = "completed", b.text
	}
	switch b.kind {
	case blockThinking:
		it := responsesOutItem{Type: "reasoning", ID: "rs_" + b.call.ID, Status: status, Summary: &[]string{}}
		if whole {
			it.Content = []responsesPart{{Type: "reasoning_text", Text: text}}
		}
		return it
	case blockTool:
		return responsesOutItem{Type: "function_call", ID: "fc_" + strings.TrimPrefix(b.call.ID, "call_"), Status: status,
			CallID: b.call.ID, Name: b.call.Function.Name, Arguments: &text}
	}
	it := responsesOutItem{Type: "message", ID: "msg_" + b.call.ID, Status: status, Role: "assistant"}
	if whole {
		it.Content = []responsesPart{{Type: "output_text", Text: text, Annotations: &[]string{}}}
	}
	return it
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req responsesRequest
	g := s.begin(w, r, b, &req)
	if g == nil {
		return
	}
	obj := responsesObject{ID: newID("resp_"), Object: "response", CreatedAt: time.Now().Unix(), Status: "in_progress",
		MaxOutputTokens: req.MaxOutputTokens, Model: b.ModelID, Output: []responsesOutItem{}, ParallelToolCalls: true,
		Temperature: req.Temperature, TopP: req.TopP, ToolChoice: req.ToolChoice, Tools: req.Tools}
	if obj.ToolChoice == nil {
		obj.ToolChoice = json.RawMessage(`"auto"`)
	}
	if obj.Tools == nil {
		obj.Tools = []responsesTool{}
	}
	if req.Instructions != "" {
		obj.Instructions = &req.Instructions
	}
	// Items get their ids from block.call.ID; those of calls are the
	// calls' own.
	var l blockList
	finish := func(res result) {
		obj.Status = "completed"
		if res.finish == "length" {
			obj.Status = "incomplete"
			obj.IncompleteDetails = &struct {
				Reason string `json:"reason"`
			}{"max_output_tokens"}
		}
		obj.Output = obj.Output[:0]
		for i := range l.blocks {
			obj.Output = append(obj.Output, responsesItemOut(&l.blocks[i], true))
		}
		u := &responsesUsage{InputTokens: g.promptN, OutputTokens: res.predictedN, TotalTokens: g.promptN + res.predictedN}
		u.InputTokensDetails.CachedTokens = res.cacheN
		obj.Usage = u
	}
	if !req.Stream {
		res, ok := g.whole(w, r, l.add)
		if !ok {
			return
		}
		for i := range l.blocks {
			if l.blocks[i].call.ID == "" {
				l.blocks[i].call.ID = newID("")
			}
		}
		finish(res)
		writeJSON(w, http.StatusOK, obj)
		return
	}
	sse := newSSE(w)
	seq := 0
	send := func(typ string, fields map[string]any) error {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return sse.event(typ, fields)
	}
	if send("response.created", map[string]any{"response": obj}) != nil ||
		send("response.in_progress", map[string]any{"response": obj}) != nil {
		return
	}
	l.emit = func(ev blockEvent, i int, text string) error {
		bl := &l.blocks[i]
		if bl.call.ID == "" {
			bl.call.ID = newID("")
		}
		item := responsesItemOut(bl, ev == blockStop)
		// at is an event's fields: where it is, then kv pairs.
		at := func(kv ...any) map[string]any {
			m := map[string]any{"item_id": item.ID, "output_index": i}
			for k := 0; k+1 < len(kv); k += 2 {
				m[kv[k].(string)] = kv[k+1]
			}
			return m
		}
		part := responsesPart{Type: "output_text", Annotations: &[]string{}}
		prefix := "response.output_text"
		if bl.kind == blockThinking {
			part, prefix = responsesPart{Type: "reasoning_text"}, "response.reasoning_text"
		}
		switch {
		case ev == blockStart:
			if err := send("response.output_item.added", map[string]any{"output_index": i, "item": item}); err != nil {
				return err
			}
			if bl.kind == blockTool {
				return nil
			}
			return send("response.content_part.added", at("content_index", 0, "part", part))
		case ev == blockDelta && bl.kind == blockTool:
			return send("response.function_call_arguments.delta", at("delta", text))
		case ev == blockDelta && bl.kind == blockText:
			return send(prefix+".delta", at("content_index", 0, "delta", text, "logprobs", []string{}))
		case ev == blockDelta:
			return send(prefix+".delta", at("content_index", 0, "delta", text))
		}
		if bl.kind == blockTool {
			if err := send("response.function_call_arguments.done", at("arguments", bl.text, "name", bl.call.Function.Name)); err != nil {
				return err
			}
		} else {
			if err := send(prefix+".done", at("content_index", 0, "text", bl.text)); err != nil {
				return err
			}
			part.Text = bl.text
			if err := send("response.content_part.done", at("content_index", 0, "part", part)); err != nil {
				return err
			}
		}
		return send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	res, ok := g.each(r, l.add)
	if !ok || l.close() != nil {
		return
	}
	if res.err != nil {
		ae := asAPIError(jobError(res.err))
		send("error", map[string]any{"code": ae.Code, "message": ae.Message, "param": nil})
		return
	}
	finish(res)
	typ := "response.completed"
	if obj.Status == "incomplete" {
		typ = "response.incomplete"
	}
	send(typ, map[string]any{"response": obj})
}
