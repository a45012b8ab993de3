package server

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"trit/chat"
	"trit/internal/testdata"
)

// qwenToolReply scripts a thinking model that sees the tool definitions
// the Qwen3 template writes into the system block, calls the tool, and
// answers once the <tool_response> comes back.
func qwenToolReply(prompt string) string {
	switch {
	case strings.Contains(prompt, "<tool_response>\nsunny"):
		return "<think>\nThe tool says sunny.\n</think>\n\nIt is sunny in Paris."
	case strings.Contains(prompt, `"name": "get_weather"`) && strings.Contains(prompt, "<tools>"):
		return "<think>\nI need the weather tool.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	}
	return "The tools did not reach the prompt."
}

// TestQwen3TemplateToolRoundTrip drives the real Qwen3 chat template with
// tools, thinking and a tool result through the server and the SDK.
func TestQwen3TemplateToolRoundTrip(t *testing.T) {
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
	tmpl, err := chat.NewTemplate(cfg.ChatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := scriptEngine(t, qwenToolReply, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, Template: tmpl, ModelID: "qwen"}})
	c := sdk(ts)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "qwen",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}})},
	}
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("finish %q content %q calls %+v", resp.Choices[0].FinishReason, msg.Content, msg.ToolCalls)
	}
	if r := msg.JSON.ExtraFields["reasoning_content"].Raw(); r != `"I need the weather tool."` {
		t.Errorf("reasoning_content %s", r)
	}
	if msg.Content != "" {
		t.Errorf("content %q next to the tool call", msg.Content)
	}
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("sunny, 21 C", msg.ToolCalls[0].ID))
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0]; got.Message.Content != "It is sunny in Paris." || got.FinishReason != "stop" {
		t.Errorf("answer %q finish %q", got.Message.Content, got.FinishReason)
	}
}
