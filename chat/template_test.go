package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"trit/internal/testdata"
)

// qwen3Template loads the chat_template field of the real Qwen3
// tokenizer_config.json.
func qwen3Template(t *testing.T) *Template {
	t.Helper()
	data, err := os.ReadFile(testdata.Path(t, "tokenizers/qwen3/tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ChatTemplate == "" {
		t.Fatal("tokenizer_config.json has no chat_template")
	}
	tmpl, err := NewTemplate(cfg.ChatTemplate)
	if err != nil {
		t.Fatalf("NewTemplate(Qwen3): %v", err)
	}
	return tmpl
}

func ptr[T any](v T) *T { return &v }

// The conversation of the multi-turn tests.
var multiTurn = []Message{
	{Role: "system", Content: "You are a helpful assistant."},
	{Role: "user", Content: "What is 2+2?"},
	{Role: "assistant", Content: "<think>\nSimple arithmetic.\n</think>\n\n2+2 = 4."},
	{Role: "user", Content: "And 3+3?"},
}

const multiTurnPrompt = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
	"<|im_start|>user\nWhat is 2+2?<|im_end|>\n" +
	// Reasoning of turns before the last user query is dropped.
	"<|im_start|>assistant\n2+2 = 4.<|im_end|>\n" +
	"<|im_start|>user\nAnd 3+3?<|im_end|>\n" +
	"<|im_start|>assistant\n"

var weatherTool = Tool(`{"type": "function", "function": {"name": "get_weather", ` +
	`"description": "Current weather & <temperature>.", "parameters": {"type": "object", ` +
	`"properties": {"unit": {"type": "string", "enum": ["c", "f"]}, "city": {"type": "string"}}, ` +
	`"required": ["city"]}}}`)

// TestQwen3Template checks renders of the real Qwen3 template against the
// strings transformers' apply_chat_template produces, written out by hand
// from the template.
func TestQwen3Template(t *testing.T) {
	tmpl := qwen3Template(t)
	tests := []struct {
		name string
		msgs []Message
		opts Options
		want string
	}{
		{
			name: "multi-turn, thinking by default",
			msgs: multiTurn,
			opts: Options{AddGenerationPrompt: true},
			want: multiTurnPrompt,
		},
		{
			name: "multi-turn, thinking on",
			msgs: multiTurn,
			opts: Options{AddGenerationPrompt: true, EnableThinking: ptr(true)},
			want: multiTurnPrompt,
		},
		{
			name: "multi-turn, thinking off",
			msgs: multiTurn,
			opts: Options{AddGenerationPrompt: true, EnableThinking: ptr(false)},
			want: multiTurnPrompt + "<think>\n\n</think>\n\n",
		},
		{
			name: "thinking off through Extra",
			msgs: multiTurn,
			opts: Options{AddGenerationPrompt: true, Extra: map[string]any{"enable_thinking": false}},
			want: multiTurnPrompt + "<think>\n\n</think>\n\n",
		},
		{
			name: "EnableThinking overrides Extra",
			msgs: multiTurn,
			opts: Options{AddGenerationPrompt: true, EnableThinking: ptr(true), Extra: map[string]any{"enable_thinking": false}},
			want: multiTurnPrompt,
		},
		{
			name: "no generation prompt",
			msgs: multiTurn[:2],
			opts: Options{},
			want: "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
				"<|im_start|>user\nWhat is 2+2?<|im_end|>\n",
		},
		{
			name: "reasoning_content kept only after the last user query",
			msgs: []Message{
				{Role: "user", Content: "Q1"},
				{Role: "assistant", ReasoningContent: "First thoughts.", Content: "A1"},
				{Role: "user", Content: "Q2"},
				{Role: "assistant", ReasoningContent: "\nSecond thoughts.\n", Content: "\nA2"},
			},
			want: "<|im_start|>user\nQ1<|im_end|>\n" +
				"<|im_start|>assistant\nA1<|im_end|>\n" +
				"<|im_start|>user\nQ2<|im_end|>\n" +
				"<|im_start|>assistant\n<think>\nSecond thoughts.\n</think>\n\nA2<|im_end|>\n",
		},
		{
			name: "tools, tool calls and tool responses",
			msgs: []Message{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "Weather in Paris and Köln?"},
				{Role: "assistant", ToolCalls: []ToolCall{
					{ID: "c1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}},
					{ID: "c2", Function: FunctionCall{Name: "get_weather", Arguments: `{"city": "Köln"}`}},
				}},
				{Role: "tool", ToolCallID: "c1", Content: `{"temp": 21}`},
				{Role: "tool", ToolCallID: "c2", Content: "18C"},
				{Role: "assistant", Content: "<think>\nBoth known.\n</think>\n\nParis 21C, Köln 18C."},
				{Role: "user", Content: "Thanks"},
			},
			opts: Options{AddGenerationPrompt: true, Tools: []Tool{weatherTool}},
			want: "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
				"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
				// tojson keeps the caller's key order, Python's separators and no escaping.
				`{"type": "function", "function": {"name": "get_weather", "description": "Current weather & <temperature>.", ` +
				`"parameters": {"type": "object", "properties": {"unit": {"type": "string", "enum": ["c", "f"]}, ` +
				`"city": {"type": "string"}}, "required": ["city"]}}}` + "\n</tools>\n\n" +
				"For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
				"<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\nWeather in Paris and Köln?<|im_end|>\n" +
				"<|im_start|>assistant\n" +
				"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\n" +
				"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Köln\"}}\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response>\n<tool_response>\n18C\n</tool_response><|im_end|>\n" +
				"<|im_start|>assistant\nParis 21C, Köln 18C.<|im_end|>\n" +
				"<|im_start|>user\nThanks<|im_end|>\n" +
				"<|im_start|>assistant\n",
		},
		{
			name: "tool call in the current turn keeps content and reasoning",
			msgs: []Message{
				{Role: "user", Content: "Weather?"},
				{Role: "assistant", ReasoningContent: "Need the tool.", Content: "Checking.", ToolCalls: []ToolCall{
					{Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
				}},
				{Role: "tool", Content: "-3C"},
			},
			opts: Options{AddGenerationPrompt: true, EnableThinking: ptr(false)},
			// The tool message is not a user query, so the assistant turn
			// after the last real query keeps its reasoning.
			want: "<|im_start|>user\nWeather?<|im_end|>\n" +
				"<|im_start|>assistant\n<think>\nNeed the tool.\n</think>\n\nChecking.\n" +
				"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n-3C\n</tool_response><|im_end|>\n" +
				"<|im_start|>assistant\n<think>\n\n</think>\n\n",
		},
		{
			name: "arguments that are not a JSON object are passed as a string",
			msgs: []Message{
				{Role: "user", Content: "x"},
				{Role: "assistant", ToolCalls: []ToolCall{{Function: FunctionCall{Name: "f", Arguments: "not json"}}}},
				{Role: "assistant", ToolCalls: []ToolCall{{Function: FunctionCall{Name: "g"}}}},
			},
			want: "<|im_start|>user\nx<|im_end|>\n" +
				"<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\", \"arguments\": not json}\n</tool_call><|im_end|>\n" +
				"<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call><|im_end|>\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.Render(tt.msgs, tt.opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tt.want {
				t.Errorf("Render mismatch\n got: %q\nwant: %q", got, tt.want)
			}
		})
	}
}

func TestChatML(t *testing.T) {
	msgs := []Message{
		{Role: "system", Content: "S"},
		{Role: "user", Content: "Hello"},
		{Role: "assistant", Content: "Hi!"},
		{Role: "user", Content: "Bye"},
	}
	const base = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n" +
		"<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
	empty, err := NewTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	if empty != ChatML() {
		t.Error(`NewTemplate("") is not the ChatML template`)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no prompt", Options{}, base},
		{"prompt", Options{AddGenerationPrompt: true}, base + "<|im_start|>assistant\n"},
		{"thinking on", Options{AddGenerationPrompt: true, EnableThinking: ptr(true)}, base + "<|im_start|>assistant\n"},
		{"thinking off", Options{AddGenerationPrompt: true, EnableThinking: ptr(false)}, base + "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := empty.Render(msgs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestVariables checks what templates see besides the messages.
func TestVariables(t *testing.T) {
	tests := []struct {
		name string
		src  string
		msgs []Message
		opts Options
		want string
	}{
		{"bos and eos", "{{ bos_token }}|{{ eos_token }}", nil, Options{BOSToken: "<s>", EOSToken: "</s>"}, "<s>|</s>"},
		{"tools none without tools", "{{ tools is none }}", nil, Options{}, "True"},
		{"enable_thinking undefined by default", "{{ enable_thinking is defined }}", nil, Options{}, "False"},
		{"add_generation_prompt false", "{{ add_generation_prompt }}", nil, Options{}, "False"},
		{"absent fields are undefined", "{{ messages[0].reasoning_content is defined }} {{ messages[0].tool_calls is defined }}",
			[]Message{{Role: "user", Content: "x"}}, Options{}, "False False"},
		{"tool call fields", "{% set c = messages[0].tool_calls[0] %}{{ c.id }} {{ c.type }} {{ c.function.name }} {{ c.function.arguments.b }}",
			[]Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "i", Function: FunctionCall{Name: "f", Arguments: `{"a":1,"b":[true,null]}`}}}}},
			Options{}, "i function f [True, None]"},
		{"message name and tool_call_id", "{{ messages[0].name }} {{ messages[0].tool_call_id }}",
			[]Message{{Role: "tool", Name: "n", ToolCallID: "id"}}, Options{}, "n id"},
		{"arguments keep key order and integers", "{{ messages[0].tool_calls[0].function.arguments|tojson }}",
			[]Message{{Role: "assistant", ToolCalls: []ToolCall{{Function: FunctionCall{Arguments: `{"z": 9007199254740993, "a": 0.5, "m": "é"}`}}}}},
			Options{}, `{"z": 9007199254740993, "a": 0.5, "m": "é"}`},
		{"extra values", "{{ a }} {{ b|tojson }} {{ c|tojson }}", nil,
			Options{Extra: map[string]any{"a": 3, "b": map[string]any{"y": 1, "x": []any{"s"}}, "c": json.RawMessage(`{"y": 1, "x": null}`)}},
			`3 {"x": ["s"], "y": 1} {"y": 1, "x": null}`},
		{"extra cannot replace messages", "{{ messages|length }}", []Message{{Role: "user"}}, Options{Extra: map[string]any{"messages": []any{}}}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := NewTemplate(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.Source() != tt.src {
				t.Errorf("Source() = %q, want %q", tmpl.Source(), tt.src)
			}
			got, err := tmpl.Render(tt.msgs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	if _, err := NewTemplate("{% if %}"); err == nil {
		t.Error("NewTemplate accepted a broken template")
	} else if te := (*TemplateError)(nil); !errors.As(err, &te) || te.Op != "compile" ||
		!strings.HasPrefix(err.Error(), "chat: compile template: ") {
		t.Errorf("compile error %v is not a compile TemplateError", err)
	}

	render := func(src string, opts Options) error {
		t.Helper()
		tmpl, err := NewTemplate(src)
		if err != nil {
			t.Fatalf("NewTemplate(%q): %v", src, err)
		}
		_, err = tmpl.Render([]Message{{Role: "user", Content: "x"}}, opts)
		return err
	}
	tests := []struct {
		name   string
		src    string
		opts   Options
		target error
	}{
		{"raise_exception", "{{ raise_exception('no system role') }}", Options{}, nil},
		// The engine panics on a negative repeat count; Render must not.
		{"engine panic", "{{ 'x' * -1 }}", Options{}, nil},
		{"tool not an object", "{{ tools }}", Options{Tools: []Tool{Tool(`[1]`)}}, ErrTool},
		{"tool not JSON", "{{ tools }}", Options{Tools: []Tool{Tool(`{"a":`)}}, ErrTool},
		{"tool with trailing data", "{{ tools }}", Options{Tools: []Tool{Tool(`{} {}`)}}, ErrTool},
		{"tool nested too deeply", "{{ tools }}", Options{Tools: []Tool{Tool(deepJSON(1000))}}, ErrTool},
		{"unsupported extra", "x", Options{Extra: map[string]any{"f": func() {}}}, nil},
		{"bad extra JSON", "x", Options{Extra: map[string]any{"j": json.RawMessage(`{`)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := render(tt.src, tt.opts)
			if err == nil {
				t.Fatal("Render succeeded, want an error")
			}
			if tt.target != nil && !errors.Is(err, tt.target) {
				t.Errorf("error %v is not %v", err, tt.target)
			}
		})
	}
}

func deepJSON(n int) string {
	b := make([]byte, 0, 2*n+2)
	b = append(b, `{"a":`...)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": {"d": [1, 2.5, "x"], "c": false}}`, `{"b": 1, "a": {"d": [1, 2.5, "x"], "c": false}}`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`"s<&>"`, `"s<&>"`},
		{`null`, `null`},
		{` 12 `, `12`},
	}
	tmpl, err := NewTemplate("{{ v|tojson }}")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got, err := tmpl.Render(nil, Options{Extra: map[string]any{"v": json.RawMessage(tt.in)}})
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: tojson gave %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `{1: 2}`, `1 2`, `}`, deepJSON(maxJSONDepth + 1)} {
		if _, err := decodeJSON([]byte(bad)); err == nil {
			t.Errorf("decodeJSON(%.30q) succeeded", bad)
		}
	}
	if _, err := decodeJSON([]byte(deepJSON(maxJSONDepth - 2))); err != nil {
		t.Errorf("decodeJSON of %d nested arrays: %v", maxJSONDepth-2, err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, {"b": null}]}`, `[1e5, -0, "x"]`, `{`, `"\u00e9"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeJSON([]byte(s))
		if valid := json.Valid([]byte(s)); err == nil && !valid {
			t.Fatalf("decodeJSON accepted invalid JSON %q as %v", s, v)
		}
	})
}

func ExampleTemplate_Render() {
	tmpl, err := NewTemplate("") // no template in the model file: ChatML
	if err != nil {
		panic(err)
	}
	prompt, err := tmpl.Render([]Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "Hi"},
	}, Options{AddGenerationPrompt: true})
	if err != nil {
		panic(err)
	}
	fmt.Print(prompt)
	// Output:
	// <|im_start|>system
	// You are terse.<|im_end|>
	// <|im_start|>user
	// Hi<|im_end|>
	// <|im_start|>assistant
}
