package server

import (
	"bytes"
	"encoding/json"
	"fmt"

	"trit/grammar"
)

// constraint is what a request asks the output to follow: a grammar, and
// for tool_choice "auto" the tag after which it applies.
type constraint struct {
	g       *grammar.Grammar
	trigger string
}

// toolOpen is the tag with which Qwen models open a tool call.
const toolOpen = "<tool_call>"

// maxParallelCalls bounds the calls of one answer under tool_choice
// "required" or a named function.
const maxParallelCalls = 8

// grammarFields are the llama-server constraint fields shared by the chat
// and completion requests.
type grammarFields struct {
	Grammar    string          `json:"grammar"`
	JSONSchema json.RawMessage `json:"json_schema"`
}

// constraint compiles the grammar or json_schema field; nil when neither
// is set.
func (f *grammarFields) constraint() (*constraint, error) {
	hasSchema := len(bytes.TrimSpace(f.JSONSchema)) > 0 && string(bytes.TrimSpace(f.JSONSchema)) != "null"
	switch {
	case f.Grammar != "" && hasSchema:
		return nil, badRequest("grammar", "give grammar or json_schema, not both")
	case f.Grammar != "":
		g, err := grammar.Parse(f.Grammar)
		if err != nil {
			return nil, badRequest("grammar", "%v", err)
		}
		if !g.MatchPrefix("") {
			return nil, badRequest("grammar", "the grammar matches no text")
		}
		return &constraint{g: g}, nil
	case hasSchema:
		return schemaConstraint(f.JSONSchema, "json_schema")
	}
	return nil, nil
}

func schemaConstraint(schema json.RawMessage, param string) (*constraint, error) {
	g, err := grammar.FromJSONSchema(schema)
	if err != nil {
		return nil, badRequest(param, "%v", err)
	}
	return &constraint{g: g}, nil
}

// chatConstraint reads response_format, the grammar fields, tools and
// tool_choice (tools is nil under tool_choice "none"). With tool_choice
// "required" or a named function the whole output is calls (one when
// parallel_tool_calls is false) whose arguments follow the tools'
// parameters; with "auto" (the default) the
// output is free until the model opens a call, and the call is
// constrained from there. A response format or grammar takes precedence
// over "auto".
func chatConstraint(req *chatRequest, tools []json.RawMessage) (*constraint, error) {
	c, err := req.grammarFields.constraint()
	if err != nil {
		return nil, err
	}
	if rf := req.ResponseFormat; rf != nil {
		var rc *constraint
		switch rf.Type {
		case "", "text":
		case "json_object":
			rc = &constraint{g: grammar.JSONObject()}
			if len(rf.Schema) > 0 { // llama-server's form
				if rc, err = schemaConstraint(rf.Schema, "response_format.schema"); err != nil {
					return nil, err
				}
			}
		case "json_schema":
			if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 {
				return nil, badRequest("response_format.json_schema.schema", "a json_schema response format needs a schema")
			}
			if rc, err = schemaConstraint(rf.JSONSchema.Schema, "response_format.json_schema.schema"); err != nil {
				return nil, err
			}
		default:
			return nil, badRequest("response_format.type", "unknown response_format type %q (text, json_object or json_schema)", rf.Type)
		}
		if rc != nil && c != nil {
			return nil, badRequest("response_format", "give response_format or grammar, not both")
		}
		if rc != nil {
			c = rc
		}
	}
	if len(tools) == 0 {
		return c, nil
	}
	choice, name, err := toolChoice(req.ToolChoice)
	if err != nil {
		return nil, err
	}
	if choice == "auto" && c != nil {
		return c, nil
	}
	if c != nil {
		return nil, badRequest("tool_choice", "tool_choice %q cannot be combined with response_format or grammar", choice)
	}
	var list []grammar.Tool
	for i, raw := range tools {
		var t struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &t) != nil || t.Function.Name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d]", i), "a tool must be {\"type\":\"function\",\"function\":{\"name\":…}}")
		}
		if name != "" && t.Function.Name != name {
			continue
		}
		params := t.Function.Parameters
		if string(bytes.TrimSpace(params)) == "null" {
			params = nil
		}
		list = append(list, grammar.Tool{Name: t.Function.Name, Parameters: params})
	}
	if len(list) == 0 {
		return nil, badRequest("tool_choice", "tool_choice names the function %q, which is not among the tools", name)
	}
	// Parallel calls (OpenAI's default) only where the whole output is
	// calls; under "auto" the generation ends with the call opened.
	calls := 1
	if choice != "auto" && (req.ParallelToolCalls == nil || *req.ParallelToolCalls) {
		calls = maxParallelCalls
	}
	g, err := grammar.ToolCall(list, choice != "auto", calls)
	if err != nil {
		return nil, badRequest("tools", "%v", err)
	}
	if choice == "auto" {
		return &constraint{g: g, trigger: toolOpen}, nil
	}
	return &constraint{g: g}, nil
}

// toolChoice reads tool_choice: "auto" (also when absent), "required", or
// a named function ("function" and its name). "none" is handled before.
func toolChoice(raw json.RawMessage) (choice, name string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "auto", "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "required":
			return s, "", nil
		}
		return "", "", badRequest("tool_choice", "unknown tool_choice %q (none, auto, required or a function)", s)
	}
	var f struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &f) != nil || f.Type != "function" || f.Function.Name == "" {
		return "", "", badRequest("tool_choice", `tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}`)
	}
	return "function", f.Function.Name, nil
}
