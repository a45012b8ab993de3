// Package chat turns a conversation into a prompt with the model's chat
// template and splits generated text into reasoning, content and tool calls.
//
// Templates are the Jinja sources stored in GGUF files
// (tokenizer.chat_template), rendered with github.com/ardanlabs/jinja under
// the same conventions as Hugging Face transformers' apply_chat_template:
// trim_blocks and lstrip_blocks on, messages as mappings with the OpenAI
// field names, tools as mappings in the order the caller wrote them, and
// tojson with Python's default separators and no ASCII escaping.
//
// The output side follows the Qwen3 conventions: reasoning inside
// <think>…</think> at the start of the reply, and Hermes-style tool calls,
// each a JSON object inside <tool_call>…</tool_call>.
package chat

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation, with the OpenAI chat field names.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is the assistant's reasoning for this turn. When it
	// is empty the template may instead find a <think> block in Content.
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a "tool" message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is one function call made by the assistant.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function part of a ToolCall.
type FunctionCall struct {
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments object, as in the OpenAI
	// API.
	Arguments string `json:"arguments"`
}

// Tool is one tool definition in the OpenAI form, for example
// {"type":"function","function":{"name":…,"description":…,"parameters":…}}.
// It is kept as raw JSON so that the template's tojson reproduces the
// caller's key order, as Python does. One difference from Python remains: a
// float with an integral value (1.0) comes out of tojson as 1.
type Tool = json.RawMessage

// Options are the template variables besides the messages.
type Options struct {
	// AddGenerationPrompt appends the header of the assistant's turn.
	AddGenerationPrompt bool
	// EnableThinking sets the enable_thinking variable; nil leaves it
	// undefined so the template uses its default.
	EnableThinking *bool
	// Tools are offered to the model; none leaves the tools variable none.
	Tools []Tool
	// BOSToken and EOSToken are the bos_token and eos_token variables.
	BOSToken, EOSToken string
	// Extra holds further template variables (such as an OpenAI request's
	// chat_template_kwargs). Values may be nil, bool, int, int64, float64,
	// string, []any, map[string]any (keys sorted) or json.RawMessage
	// (object keys kept in order). The fields above take precedence, except
	// that an enable_thinking in Extra applies when EnableThinking is nil.
	Extra map[string]any
}

// Template is a compiled chat template. It is safe for concurrent use.
type Template struct {
	src string
	t   *jinja.Template
}

// ErrTool reports a tool definition that is not a JSON object.
var ErrTool = errors.New("chat: tool definition is not a JSON object")

// A TemplateError reports a template that failed to compile or render.
type TemplateError struct {
	Op  string // "compile" or "render"
	Err error
}

// Error returns "chat: <op> template: <engine message>".
func (e *TemplateError) Error() string { return "chat: " + e.Op + " template: " + e.Err.Error() }

// Unwrap returns the engine's error.
func (e *TemplateError) Unwrap() error { return e.Err }

// chatMLSource is the fallback template: plain ChatML as Qwen models use it,
// with Qwen3's empty think block when thinking is switched off.
const chatMLSource = `{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\n\n</think>\n\n' }}
{%- endif %}
{%- endif %}`

var chatML = func() *Template {
	t, err := compile(chatMLSource)
	if err != nil {
		panic(err) // a bug in chatMLSource
	}
	return t
}()

// ChatML returns the fallback template for models whose file has no chat
// template: each message as <|im_start|>role\ncontent<|im_end|>\n, then
// <|im_start|>assistant\n as the generation prompt (followed by an empty
// think block when EnableThinking is false). It ignores tools.
func ChatML() *Template { return chatML }

// NewTemplate compiles a Jinja chat template. An empty src gives ChatML.
//
// Engine panics on odd templates are returned as errors, but a template is
// still code: one that loops or builds huge strings makes Render slow or
// large. Templates come from the model file the user chose to run.
func NewTemplate(src string) (*Template, error) {
	if src == "" {
		return chatML, nil
	}
	return compile(src)
}

func compile(src string) (t *Template, err error) {
	// The template comes from a model file; an engine panic on a strange
	// template must become an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &TemplateError{"compile", fmt.Errorf("engine panic: %v", r)}
		}
	}()
	jt, err := jinja.Compile(src)
	if err != nil {
		return nil, &TemplateError{"compile", err}
	}
	return &Template{src: src, t: jt}, nil
}

// Source returns the Jinja source of the template.
func (t *Template) Source() string { return t.src }

// Render renders the conversation into a prompt.
//
// Each message becomes a mapping with role and content, plus
// reasoning_content, tool_calls, tool_call_id and name when they are set
// (absent keys are undefined to the template, as in transformers). A tool
// call's arguments are given as a mapping when they are a JSON object, as
// llama.cpp does, so that templates can iterate them or apply tojson;
// otherwise as the string.
func (t *Template) Render(msgs []Message, opts Options) (out string, err error) {
	vars, err := variables(msgs, opts)
	if err != nil {
		return "", err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", &TemplateError{"render", fmt.Errorf("engine panic: %v", r)}
		}
	}()
	out, err = t.t.RenderValues(vars)
	if err != nil {
		return "", &TemplateError{"render", err}
	}
	return out, nil
}

// variables builds the template's variables.
func variables(msgs []Message, opts Options) (map[string]jinja.Value, error) {
	vars := make(map[string]jinja.Value, len(opts.Extra)+6)
	for k, v := range opts.Extra {
		val, err := extraValue(v)
		if err != nil {
			return nil, fmt.Errorf("chat: template variable %q: %w", k, err)
		}
		vars[k] = val
	}

	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		list[i] = messageValue(m)
	}
	vars["messages"] = jinja.NewList(list)

	vars["tools"] = jinja.None()
	if len(opts.Tools) > 0 {
		tools := make([]jinja.Value, len(opts.Tools))
		for i, raw := range opts.Tools {
			v, err := decodeJSON(raw)
			if err != nil || !v.IsDict() {
				return nil, fmt.Errorf("%w (tool %d)", ErrTool, i)
			}
			tools[i] = v
		}
		vars["tools"] = jinja.NewList(tools)
	}

	vars["add_generation_prompt"] = jinja.NewBool(opts.AddGenerationPrompt)
	vars["bos_token"] = jinja.NewString(opts.BOSToken)
	vars["eos_token"] = jinja.NewString(opts.EOSToken)
	if opts.EnableThinking != nil {
		vars["enable_thinking"] = jinja.NewBool(*opts.EnableThinking)
	}
	return vars, nil
}

// extraValue converts one Options.Extra value.
func extraValue(v any) (jinja.Value, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return decodeJSON(raw)
	}
	val := jinja.FromGoValue(v)
	if val.IsUndefined() {
		return val, fmt.Errorf("unsupported type %T", v)
	}
	return val, nil
}

// messageValue converts a message into the mapping a template sees.
func messageValue(m Message) jinja.Value {
	v := jinja.NewDict()
	d := v.AsDict()
	d.Set("role", jinja.NewString(m.Role))
	d.Set("content", jinja.NewString(m.Content))
	if m.ReasoningContent != "" {
		d.Set("reasoning_content", jinja.NewString(m.ReasoningContent))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = toolCallValue(tc)
		}
		d.Set("tool_calls", jinja.NewList(calls))
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", jinja.NewString(m.ToolCallID))
	}
	if m.Name != "" {
		d.Set("name", jinja.NewString(m.Name))
	}
	return v
}

func toolCallValue(tc ToolCall) jinja.Value {
	fn := jinja.NewDict()
	fn.AsDict().Set("name", jinja.NewString(tc.Function.Name))
	fn.AsDict().Set("arguments", argumentsValue(tc.Function.Arguments))

	v := jinja.NewDict()
	d := v.AsDict()
	if tc.ID != "" {
		d.Set("id", jinja.NewString(tc.ID))
	}
	typ := tc.Type
	if typ == "" {
		typ = "function"
	}
	d.Set("type", jinja.NewString(typ))
	d.Set("function", fn)
	return v
}

// argumentsValue gives arguments as a mapping when they are a JSON object
// (empty arguments count as {}), else as the string itself.
func argumentsValue(args string) jinja.Value {
	if isBlank(args) {
		return jinja.NewDict()
	}
	if v, err := decodeJSON([]byte(args)); err == nil && v.IsDict() {
		return v
	}
	return jinja.NewString(args)
}
