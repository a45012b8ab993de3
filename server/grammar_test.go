package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"trit/internal/schematest"
)

func constrainedBody(t *testing.T, fields map[string]any) string {
	t.Helper()
	req := map[string]any{"messages": []map[string]string{{"role": "user", "content": "Answer in JSON."}}}
	for k, v := range fields {
		req[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJSONSchemaResponse samples the demo model at temperature 1 under
// the schema of the issue (an object with a required integer "a"): every
// finished answer validates, and a max_tokens cut says "length".
func TestJSONSchemaResponse(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","maxLength":5}},"required":["a"],"additionalProperties":false}`
	valid := schematest.Validator(t, schema)
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	stops := 0
	for seed := range 8 {
		body := constrainedBody(t, map[string]any{"max_tokens": 120, "temperature": 1, "seed": seed,
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "strict": true, "schema": json.RawMessage(schema)}}})
		code, resp := ts.post(t, "/v1/chat/completions", body)
		if code != 200 {
			t.Fatalf("%d %s", code, resp)
		}
		var r chatResponse
		if err := json.Unmarshal([]byte(resp), &r); err != nil {
			t.Fatal(err)
		}
		c := r.Choices[0]
		if c.FinishReason != "stop" {
			continue
		}
		stops++
		if err := valid(*c.Message.Content); err != nil {
			t.Errorf("seed %d: %q does not validate: %v", seed, *c.Message.Content, err)
		}
	}
	if stops == 0 {
		t.Error("no answer finished within 120 tokens")
	}
	body := constrainedBody(t, map[string]any{"max_tokens": 2, "response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"schema": json.RawMessage(schema)}}})
	_, resp := ts.post(t, "/v1/chat/completions", body)
	var r chatResponse
	json.Unmarshal([]byte(resp), &r)
	if r.Choices[0].FinishReason != "length" {
		t.Errorf("cut at 2 tokens: finish %q, want length", r.Choices[0].FinishReason)
	}
}

func TestConstraintRequestErrors(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	fn := map[string]any{"type": "function", "function": map[string]any{"name": "f", "parameters": map[string]any{"type": "object", "not": map[string]any{}}}}
	ok := map[string]any{"type": "function", "function": map[string]any{"name": "g"}}
	tests := []struct {
		name   string
		fields map[string]any
		param  string
		want   string
	}{
		{"unsupported keyword", map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"schema": map[string]any{"type": "array", "uniqueItems": true}}}},
			"response_format.json_schema.schema", `"uniqueItems"`},
		{"no schema", map[string]any{"response_format": map[string]any{"type": "json_schema"}}, "response_format.json_schema.schema", "needs a schema"},
		{"bad grammar", map[string]any{"grammar": `root ::= "x`}, "grammar", "unterminated"},
		{"empty language", map[string]any{"grammar": `root ::= [^\x00-\U0010FFFF]`}, "grammar", "matches no text"},
		{"grammar and format", map[string]any{"grammar": `root ::= "x"`, "response_format": map[string]any{"type": "json_object"}}, "response_format", "not both"},
		{"tool schema", map[string]any{"tools": []any{fn}, "tool_choice": "required"}, "tools", `"not"`},
		{"unknown function", map[string]any{"tools": []any{ok}, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "h"}}}, "tool_choice", `"h"`},
		{"bad choice", map[string]any{"tools": []any{ok}, "tool_choice": "always"}, "tool_choice", "always"},
		{"format type", map[string]any{"response_format": map[string]any{"type": "yaml"}}, "response_format.type", "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, resp := ts.post(t, "/v1/chat/completions", constrainedBody(t, tt.fields))
			var e struct {
				Error APIError `json:"error"`
			}
			json.Unmarshal([]byte(resp), &e)
			if code != 400 || e.Error.Param != tt.param || !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("%d %s; want 400 on %s mentioning %s", code, resp, tt.param, tt.want)
			}
		})
	}
	code, resp := ts.post(t, "/v1/completions", `{"prompt":"x","json_schema":{"type":"object","minProperties":1}}`)
	if code != 400 || !strings.Contains(resp, `keyword \"minProperties\"`) {
		t.Errorf("completions with an unsupported schema: %d %s", code, resp)
	}
}

// TestGrammarField constrains chat and completions with a GBNF grammar.
func TestGrammarField(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	const g = `root ::= ("yes" | "no") " " [0-9]{2}`
	for seed := range 4 {
		code, resp := ts.post(t, "/v1/chat/completions", constrainedBody(t, map[string]any{"grammar": g, "temperature": 1, "seed": seed, "max_tokens": 50}))
		var r chatResponse
		json.Unmarshal([]byte(resp), &r)
		if code != 200 || r.Choices[0].FinishReason != "stop" {
			t.Fatalf("%d %s", code, resp)
		}
		if got := *r.Choices[0].Message.Content; len(got) != len("yes 12") && len(got) != len("no 12") || !(strings.HasPrefix(got, "yes ") || strings.HasPrefix(got, "no ")) {
			t.Errorf("chat answer %q outside the grammar", got)
		}
		code, resp = ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":"Q:","grammar":%q,"temperature":1,"seed":%d,"max_tokens":50}`, g, seed))
		var cr completionResponse
		json.Unmarshal([]byte(resp), &cr)
		if code != 200 || *cr.Choices[0].FinishReason != "stop" || !(strings.HasPrefix(cr.Choices[0].Text, "yes ") || strings.HasPrefix(cr.Choices[0].Text, "no ")) {
			t.Errorf("completion: %d %s", code, resp)
		}
	}
}

// TestThinkingThenSchema: with thinking on, the reasoning stays free (it
// holds braces that are no JSON) and the constrained answer is the
// content.
func TestThinkingThenSchema(t *testing.T) {
	const answer = `{"a": 7}`
	eng, _ := scriptEngine(t, func(string) string {
		return "<think>\nLet me see: {a is seven\n</think>\n\n" + answer
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	for _, stream := range []bool{false, true} {
		body := constrainedBody(t, map[string]any{"max_tokens": 200, "stream": stream, "chat_template_kwargs": map[string]any{"enable_thinking": true},
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"schema": schema}}})
		code, resp := ts.post(t, "/v1/chat/completions", body)
		if code != 200 {
			t.Fatalf("%d %s", code, resp)
		}
		var reasoning, content, finish string
		if stream {
			data, err := readSSE(strings.NewReader(resp))
			if err != nil {
				t.Fatal(err)
			}
			sr, err := checkChatStream(data, false)
			if err != nil {
				t.Fatal(err)
			}
			reasoning, content, finish = sr.reasoning, sr.content, sr.finish
		} else {
			var r chatResponse
			json.Unmarshal([]byte(resp), &r)
			reasoning, content, finish = r.Choices[0].Message.ReasoningContent, *r.Choices[0].Message.Content, r.Choices[0].FinishReason
		}
		if reasoning != "Let me see: {a is seven" || content != answer || finish != "stop" {
			t.Errorf("stream=%v: reasoning %q content %q finish %q", stream, reasoning, content, finish)
		}
	}
}

// TestSDKToolChoiceRequired: under tool_choice "required" and a named
// function, the demo model's random text is forced into calls (one with
// parallel_tool_calls false) whose arguments validate against the tool's
// schema.
func TestSDKToolChoiceRequired(t *testing.T) {
	weather := map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string", "maxLength": 10},
		"days": map[string]any{"type": "integer", "minimum": 1, "maximum": 14},
		"unit": map[string]any{"enum": []string{"C", "F"}}},
		"required": []string{"city", "days"}, "additionalProperties": false}
	clock := map[string]any{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string", "format": "time"}}, "additionalProperties": false}
	schemas := map[string]map[string]any{"get_weather": weather, "get_time": clock}
	validators := map[string]func(string) error{}
	var tools []openai.ChatCompletionToolUnionParam
	for _, name := range []string{"get_weather", "get_time"} {
		b, _ := json.Marshal(schemas[name])
		validators[name] = schematest.Validator(t, string(b))
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name, Parameters: shared.FunctionParameters(schemas[name])}))
	}
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
	c := sdk(ts)
	ctx := context.Background()
	choices := map[string]openai.ChatCompletionToolChoiceOptionUnionParam{
		"required": {OfAuto: openai.String("required")},
		"named":    openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}),
	}
	for name, choice := range choices {
		calls := 0
		for seed := range 6 {
			parallel := seed%2 == 0
			resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    "demo",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris for 3 days?")},
				Tools:    tools, ToolChoice: choice, ParallelToolCalls: openai.Bool(parallel),
				MaxTokens: openai.Int(300), Temperature: openai.Float(1), Seed: openai.Int(int64(seed)),
			})
			if err != nil {
				t.Fatal(err)
			}
			ch := resp.Choices[0]
			if ch.FinishReason == "length" {
				continue
			}
			most := 1
			if parallel {
				most = maxParallelCalls
			}
			if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) == 0 || len(ch.Message.ToolCalls) > most {
				t.Fatalf("%s seed %d: finish %q, calls %+v, content %q", name, seed, ch.FinishReason, ch.Message.ToolCalls, ch.Message.Content)
			}
			for _, tc := range ch.Message.ToolCalls {
				calls++
				v := validators[tc.Function.Name]
				if v == nil || name == "named" && tc.Function.Name != "get_time" {
					t.Fatalf("%s: call of %q", name, tc.Function.Name)
				}
				if err := v(tc.Function.Arguments); err != nil {
					t.Errorf("%s seed %d: arguments %s of %s do not validate: %v", name, seed, tc.Function.Arguments, tc.Function.Name, err)
				}
			}
		}
		if calls == 0 {
			t.Errorf("%s: no call finished within 300 tokens", name)
		}
	}
}

// TestToolChoiceAutoConstrainsOpenedCall: under "auto" the text before a
// call is free, and once the model opens <tool_call> the call follows the
// tool's schema even when the model would write arguments that break it.
func TestToolChoiceAutoConstrainsOpenedCall(t *testing.T) {
	eng, _ := scriptEngine(t, func(string) string {
		return "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 5}}\n</tool_call>"
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	const schema = `{"type":"object","properties":{"city":{"type":"string","maxLength":3}},"required":["city"],"additionalProperties":false}`
	valid := schematest.Validator(t, schema)
	tool := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": json.RawMessage(schema)}}
	code, resp := ts.post(t, "/v1/chat/completions", constrainedBody(t, map[string]any{"tools": []any{tool}, "temperature": 0, "max_tokens": 200}))
	if code != 200 {
		t.Fatalf("%d %s", code, resp)
	}
	var r chatResponse
	json.Unmarshal([]byte(resp), &r)
	c := r.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.Content == nil || *c.Message.Content != "Checking." {
		t.Fatalf("finish %q, calls %+v, content %v", c.FinishReason, c.Message.ToolCalls, c.Message.Content)
	}
	if err := valid(c.Message.ToolCalls[0].Function.Arguments); err != nil {
		t.Errorf("arguments %s: %v", c.Message.ToolCalls[0].Function.Arguments, err)
	}
	// Unconstrained ("none"), the scripted arguments come through as they are.
	code, resp = ts.post(t, "/v1/chat/completions", constrainedBody(t, map[string]any{"tools": []any{tool}, "tool_choice": "none", "temperature": 0, "max_tokens": 200}))
	if code != 200 || !strings.Contains(resp, `\"city\": 5`) {
		t.Errorf("tool_choice none: %d %s", code, resp)
	}
}
