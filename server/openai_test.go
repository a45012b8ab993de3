package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"trit/chat"
)

// sdk returns an official OpenAI client for ts.
func sdk(ts *testServer, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(ts.URL + "/v1/"), option.WithAPIKey("anything"),
		option.WithHTTPClient(ts.client), option.WithMaxRetries(0),
	}, opts...)...)
}

// chatMLPrompt renders one user message the way the server does for a
// model without a chat template.
func chatMLPrompt(t testing.TB, user string) string {
	t.Helper()
	p, err := chat.ChatML().Render([]chat.Message{{Role: "user", Content: user}}, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSDKModels(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
	c := sdk(ts)
	ctx := context.Background()
	page, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "demo" || page.Data[0].OwnedBy == "" {
		t.Fatalf("models: %+v", page.Data)
	}
	m, err := c.Models.Get(ctx, "demo")
	if err != nil || m.ID != "demo" {
		t.Fatalf("Get: %v %+v", err, m)
	}
	if _, err := c.Models.Get(ctx, "gpt-9"); err == nil {
		t.Fatal("Get of an unknown model succeeded")
	}
	// Clients that join URLs carelessly ask for /v1//models.
	if code, body := ts.get(t, "/v1//models"); code != 200 || !strings.Contains(body, `"demo"`) {
		t.Fatalf("/v1//models: %d %s", code, body)
	}
}

func TestSDKChat(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Say something.", 12
	want := greedy(t, ref, chatMLPrompt(t, user), n)
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}, Parallel: 2})
	c := sdk(ts)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:       "demo",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(user)},
		MaxTokens:   openai.Int(n),
		Temperature: openai.Float(0),
	}
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != want {
		t.Errorf("chat content %q, want engine.Generate's %q", got, want)
	}
	if resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != n || resp.Usage.PromptTokens == 0 ||
		resp.Usage.TotalTokens != resp.Usage.PromptTokens+n {
		t.Errorf("finish %q usage %+v", resp.Choices[0].FinishReason, resp.Usage)
	}
	var tm timings
	if err := json.Unmarshal([]byte(resp.JSON.ExtraFields["timings"].Raw()), &tm); err != nil || tm.PredictedN != n || tm.PromptN+tm.CacheN != int(resp.Usage.PromptTokens) {
		t.Errorf("timings %+v (%v)", tm, err)
	}

	// The same request streamed, with usage; max_completion_tokens instead.
	params.MaxTokens = openai.ChatCompletionNewParams{}.MaxTokens
	params.MaxCompletionTokens = openai.Int(n)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	chunks, usageChunks := 0, 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		chunks++
		if len(ch.Choices) == 0 {
			usageChunks++
			if ch.Usage.CompletionTokens != n {
				t.Errorf("usage chunk %+v", ch.Usage)
			}
		} else if ch.JSON.Usage.Raw() != "null" {
			t.Errorf("chunk before the end has usage %s, want null", ch.JSON.Usage.Raw())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if usageChunks != 1 || chunks < 3 {
		t.Errorf("%d chunks, %d usage chunks", chunks, usageChunks)
	}
	if got := acc.Choices[0].Message.Content; got != want {
		t.Errorf("streamed content %q, want %q", got, want)
	}
	if acc.Choices[0].FinishReason != "length" || acc.Usage.CompletionTokens != n {
		t.Errorf("streamed finish %q usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
}

// toolReply scripts a model that calls get_weather, then answers from the
// tool's result.
func toolReply(prompt string) string {
	switch {
	case strings.Contains(prompt, "sunny"):
		return "It is sunny in Paris."
	case strings.Contains(prompt, "weather"):
		return "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	}
	return "Hello."
}

func TestSDKToolCallRoundTrip(t *testing.T) {
	// The demo model's random weights never produce a tool call, so a
	// scripted model writes the Qwen/Hermes <tool_call> block; everything
	// after the model (parsing, deltas, the SDK) is the real path.
	eng, _ := scriptEngine(t, toolReply, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, ModelID: "script"}})
	c := sdk(ts)
	ctx := context.Background()
	tool := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather in a city"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{
			"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	})
	params := openai.ChatCompletionNewParams{
		Model:    "script",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools:    []openai.ChatCompletionToolUnionParam{tool},
	}
	for _, streamed := range []bool{false, true} {
		var msg openai.ChatCompletionMessage
		var finish string
		if streamed {
			stream := c.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			calls := 0
			for stream.Next() {
				acc.AddChunk(stream.Current())
				if _, ok := acc.JustFinishedToolCall(); ok {
					calls++
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if calls != 1 {
				t.Errorf("stream: %d finished tool calls", calls)
			}
			msg, finish = acc.Choices[0].Message, acc.Choices[0].FinishReason
		} else {
			resp, err := c.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			msg, finish = resp.Choices[0].Message, resp.Choices[0].FinishReason
		}
		if finish != "tool_calls" || len(msg.ToolCalls) != 1 {
			t.Fatalf("streamed=%v: finish %q, tool calls %+v", streamed, finish, msg.ToolCalls)
		}
		tc := msg.ToolCalls[0]
		if tc.ID == "" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Paris"}` {
			t.Fatalf("streamed=%v: tool call %+v", streamed, tc)
		}
		if msg.Content != "Let me check." {
			t.Errorf("streamed=%v: content %q", streamed, msg.Content)
		}
		// Second turn: the tool's result goes back; the model answers.
		next := params
		next.Messages = append(append([]openai.ChatCompletionMessageParamUnion{}, params.Messages...),
			msg.ToParam(), openai.ToolMessage("sunny, 21 C", tc.ID))
		resp, err := c.Chat.Completions.New(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0]; got.Message.Content != "It is sunny in Paris." || got.FinishReason != "stop" || len(got.Message.ToolCalls) != 0 {
			t.Errorf("streamed=%v: final answer %q finish %q", streamed, got.Message.Content, got.FinishReason)
		}
	}
}

func TestSDKCompletions(t *testing.T) {
	ref := demoEngine(t)
	const prompt, n = "Once upon a time", 10
	want := greedy(t, ref, prompt, n)
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	c := sdk(ts)
	ctx := context.Background()
	params := openai.CompletionNewParams{
		Model:       "trit",
		Prompt:      openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)},
		MaxTokens:   openai.Int(n),
		Temperature: openai.Float(0),
	}
	resp, err := c.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Text != want || resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != n {
		t.Errorf("completion %q finish %q usage %+v; want %q", resp.Choices[0].Text, resp.Choices[0].FinishReason, resp.Usage, want)
	}
	// A fresh server for the streamed request: on the first one, the
	// prompt's cached prefix would leave its last token to the one-row
	// kernels, whose float rounding differs from the batch kernels' (equal
	// within TestLargeMatMul's bound), and the demo model's near-ties can
	// turn that into another greedy token.
	c = sdk(startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}}))
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Completions.NewStreaming(ctx, params)
	var text strings.Builder
	finish, usage := "", int64(0)
	for stream.Next() {
		ch := stream.Current()
		for _, c := range ch.Choices {
			text.WriteString(c.Text)
			if c.FinishReason != "" {
				finish = string(c.FinishReason)
			}
		}
		usage += ch.Usage.CompletionTokens
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != want || finish != "length" || usage != n {
		t.Errorf("streamed completion %q finish %q usage %d; want %q", text.String(), finish, usage, want)
	}
}

func TestSDKAPIKey(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, APIKey: "s3cret"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bad, good := sdk(ts), sdk(ts, option.WithAPIKey("s3cret"))
	if _, err := bad.Models.List(ctx); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong key: err %v, want 401", err)
	}
	page, err := good.Models.List(ctx)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("right key: %v", err)
	}
	if code, _ := ts.get(t, "/health"); code != 200 {
		t.Errorf("/health with a key configured: %d, want 200 without credentials", code)
	}
}
