package chat

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// runToolCalls feeds text split at the given offsets and collects the
// content and calls of every Write and the final Flush.
func runToolCalls(text string, cuts ...int) (string, []ToolCall) {
	var p ToolCallParser
	var c strings.Builder
	var calls []ToolCall
	prev := 0
	for _, cut := range append(cuts, len(text)) {
		dc, dcalls := p.Write(text[prev:cut])
		c.WriteString(dc)
		calls = append(calls, dcalls...)
		prev = cut
	}
	dc, dcalls := p.Flush()
	c.WriteString(dc)
	return c.String(), append(calls, dcalls...)
}

func call(name, args string) ToolCall {
	return ToolCall{Type: "function", Function: FunctionCall{Name: name, Arguments: args}}
}

var toolCallTests = []struct {
	name    string
	text    string
	content string
	calls   []ToolCall
}{
	{
		name:    "content then a call",
		text:    "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n</tool_call>",
		content: "Let me check.",
		calls:   []ToolCall{call("get_weather", `{"city":"Paris","days":[1,2]}`)},
	},
	{
		name: "two calls",
		text: "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": \"<tool_call>\"}}\n</tool_call>\n",
		calls: []ToolCall{
			call("a", `{}`),
			call("b", `{"x":"<tool_call>"}`),
		},
	},
	{
		name:    "no calls",
		text:    "Hello <b>world</b>\n",
		content: "Hello <b>world</b>\n",
	},
	{
		name:    "text after a call",
		text:    "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>\n\nDone.",
		content: "Done.",
		calls:   []ToolCall{call("f", `{}`)},
	},
	{
		name:  "arguments as a JSON string",
		text:  `<tool_call>{"name":"f","arguments":"{\"a\": 1}"}</tool_call>`,
		calls: []ToolCall{call("f", `{"a": 1}`)},
	},
	{
		name:  "no arguments",
		text:  `<tool_call>{"name":"f"}</tool_call>`,
		calls: []ToolCall{call("f", `{}`)},
	},
	{
		name:  "null arguments",
		text:  `<tool_call>{"name":"f","arguments":null}</tool_call>`,
		calls: []ToolCall{call("f", `{}`)},
	},
	{
		name:    "invalid JSON is content",
		text:    "x\n<tool_call>\nnot json\n</tool_call>",
		content: "x\n<tool_call>\nnot json\n</tool_call>",
	},
	{
		name:    "array arguments are content",
		text:    `<tool_call>{"name":"f","arguments":[1]}</tool_call>`,
		content: `<tool_call>{"name":"f","arguments":[1]}</tool_call>`,
	},
	{
		name:    "missing name is content",
		text:    `<tool_call>{"arguments":{}}</tool_call>`,
		content: `<tool_call>{"arguments":{}}</tool_call>`,
	},
	{
		name:    "trailing brace is content",
		text:    `<tool_call>{"name":"f","arguments":{}}}</tool_call>`,
		content: `<tool_call>{"name":"f","arguments":{}}}</tool_call>`,
	},
	{
		name:    "bad call between good ones",
		text:    "<tool_call>{\"name\":\"a\"}</tool_call>\n<tool_call>oops</tool_call>\n<tool_call>{\"name\":\"b\"}</tool_call>",
		content: "<tool_call>oops</tool_call>",
		calls:   []ToolCall{call("a", `{}`), call("b", `{}`)},
	},
	{
		name:    "unclosed block",
		text:    "a \n<tool_call>{\"name\":",
		content: "a \n<tool_call>{\"name\":",
	},
	{
		name:    "partial open tag",
		text:    "a <tool",
		content: "a <tool",
	},
	{
		name:    "unicode",
		text:    "天气？<tool_call>{\"name\":\"天气\",\"arguments\":{\"城市\":\"北京\"}}</tool_call>",
		content: "天气？",
		calls:   []ToolCall{call("天气", `{"城市":"北京"}`)},
	},
	{
		name: "empty",
	},
}

// TestToolCallParser checks every way of cutting the text into one, two or
// three chunks, and byte by byte, against the expected result.
func TestToolCallParser(t *testing.T) {
	for _, tt := range toolCallTests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what, content string, calls []ToolCall) {
				t.Helper()
				if content != tt.content || !slices.Equal(calls, tt.calls) {
					t.Fatalf("%s: got %q, %+v; want %q, %+v", what, content, calls, tt.content, tt.calls)
				}
			}
			n := len(tt.text)
			for i := 0; i <= n; i++ {
				for j := i; j <= n; j++ {
					c, calls := runToolCalls(tt.text, i, j)
					check(fmt.Sprintf("cuts %d,%d", i, j), c, calls)
				}
			}
			cuts := make([]int, 0, n)
			for i := 1; i < n; i++ {
				cuts = append(cuts, i)
			}
			c, calls := runToolCalls(tt.text, cuts...)
			check("byte by byte", c, calls)
			c, calls = ParseToolCalls(tt.text)
			check("ParseToolCalls", c, calls)
		})
	}
}

// TestToolCallParserStreams checks that content is released before a call
// completes and each call as soon as its block closes.
func TestToolCallParserStreams(t *testing.T) {
	var p ToolCallParser
	steps := []struct {
		chunk, content string
		calls          int
	}{
		{"I will", "I will", 0},
		{" call it.\n<tool", " call it.", 0},
		{"_call>\n{\"name\": \"f\", ", "", 0},
		{"\"arguments\": {}}\n</tool_call>", "", 1},
		{"\n", "", 0},
		{"Then", "Then", 0},
	}
	for i, s := range steps {
		c, calls := p.Write(s.chunk)
		if c != s.content || len(calls) != s.calls {
			t.Fatalf("step %d Write(%q) = %q, %d calls; want %q, %d", i, s.chunk, c, len(calls), s.content, s.calls)
		}
	}
}

func FuzzToolCallParser(f *testing.F) {
	for _, tt := range toolCallTests {
		f.Add(tt.text, 2, 7)
	}
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		if len(text) > 300 {
			return
		}
		n := len(text)
		a, b = cut(a, n), cut(b, n)
		if a > b {
			a, b = b, a
		}
		c1, calls1 := runToolCalls(text)
		c2, calls2 := runToolCalls(text, a, b)
		if c1 != c2 || !slices.Equal(calls1, calls2) {
			t.Fatalf("cuts %d,%d changed the result: %q %+v vs %q %+v", a, b, c1, calls1, c2, calls2)
		}
		if len(c1) > n {
			t.Fatalf("content %q longer than input %q", c1, text)
		}
		if !strings.Contains(text, toolOpen) && c1 != text {
			t.Fatalf("text without a tool call changed: %q → %q", text, c1)
		}
		for _, call := range calls1 {
			if call.Function.Name == "" || call.Type != "function" {
				t.Fatalf("bad call %+v", call)
			}
		}
	})
}

func ExampleParseToolCalls() {
	content, calls := ParseToolCalls("Checking.\n<tool_call>\n" +
		`{"name": "get_weather", "arguments": {"city": "Paris"}}` + "\n</tool_call>")
	fmt.Printf("%q\n", content)
	for _, c := range calls {
		fmt.Println(c.Function.Name, c.Function.Arguments)
	}
	// Output:
	// "Checking."
	// get_weather {"city":"Paris"}
}
