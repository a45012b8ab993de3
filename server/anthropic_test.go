package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"trit/tokenizer"
)

// greedyOpt sets temperature 0, which the v2 SDK's params no longer name.
var greedyOpt = aoption.WithJSONSet("temperature", 0)

// anthropicSDK returns an official Anthropic client for ts.
func anthropicSDK(ts *testServer, opts ...aoption.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]aoption.RequestOption{
		aoption.WithBaseURL(ts.URL + "/"), aoption.WithAPIKey("anything"),
		aoption.WithHTTPClient(ts.client), aoption.WithMaxRetries(0),
	}, opts...)...)
}

// anthropicStream runs params streamed and returns the accumulated
// message and the event types in order.
func anthropicStream(t *testing.T, c anthropic.Client, params anthropic.MessageNewParams) (anthropic.Message, []string) {
	t.Helper()
	stream := c.Messages.NewStreaming(context.Background(), params)
	var msg anthropic.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return msg, types
}

func TestAnthropicText(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Say something.", 12
	want := greedy(t, ref, chatMLPrompt(t, user), n)
	for _, streamed := range []bool{false, true} {
		// A fresh server each: see TestSDKCompletions on cached prefixes.
		ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
		c := anthropicSDK(ts, greedyOpt)
		params := anthropic.MessageNewParams{
			Model:     "claude-sonnet-4-5", // what clients configured for Claude send
			MaxTokens: n,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(user))},
		}
		var msg anthropic.Message
		if streamed {
			var types []string
			msg, types = anthropicStream(t, c, params)
			seq := strings.Join(types, " ")
			if !strings.HasPrefix(seq, "message_start content_block_start content_block_delta") ||
				!strings.HasSuffix(seq, "content_block_stop message_delta message_stop") {
				t.Errorf("event sequence %s", seq)
			}
		} else {
			resp, err := c.Messages.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			msg = *resp
		}
		if len(msg.Content) != 1 || msg.Content[0].Type != "text" || msg.Content[0].Text != want {
			t.Errorf("streamed=%v: content %+v, want one text block %q", streamed, msg.Content, want)
		}
		if msg.StopReason != anthropic.StopReasonMaxTokens || msg.Usage.OutputTokens != n || msg.Usage.InputTokens == 0 ||
			msg.Model != "demo" || !strings.HasPrefix(msg.ID, "msg_") {
			t.Errorf("streamed=%v: stop %q usage %+v model %q id %q", streamed, msg.StopReason, msg.Usage, msg.Model, msg.ID)
		}
	}
}

func TestAnthropicStopSequence(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Stop me if you can", 24
	full := greedy(t, ref, chatMLPrompt(t, user), n)
	if len(full) < 12 {
		t.Fatalf("greedy output %q too short to cut", full)
	}
	stop := full[8:11]
	want := full[:strings.Index(full, stop)]
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	c := anthropicSDK(ts, greedyOpt)
	resp, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "x", MaxTokens: n, StopSequences: []string{"zzzzzz", stop},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(user))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != anthropic.StopReasonStopSequence || resp.StopSequence != stop || resp.Content[0].Text != want {
		t.Errorf("stop %q %q text %q; want stop_sequence %q text %q", resp.StopReason, resp.StopSequence, resp.Content[0].Text, stop, want)
	}
}

func TestAnthropicToolRoundTrip(t *testing.T) {
	eng, _ := scriptEngine(t, toolReply, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, ModelID: "script"}})
	c := anthropicSDK(ts)
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name: "get_weather", Description: anthropic.String("Current weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}},
	}}}
	first := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))}
	for _, streamed := range []bool{false, true} {
		params := anthropic.MessageNewParams{Model: "x", MaxTokens: 200, Messages: first, Tools: tools}
		var msg anthropic.Message
		if streamed {
			msg, _ = anthropicStream(t, c, params)
		} else {
			resp, err := c.Messages.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			msg = *resp
		}
		if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 2 {
			t.Fatalf("streamed=%v: stop %q content %+v", streamed, msg.StopReason, msg.Content)
		}
		text, call := msg.Content[0], msg.Content[1]
		if text.Type != "text" || text.Text != "Let me check." {
			t.Errorf("streamed=%v: first block %+v", streamed, text)
		}
		if call.Type != "tool_use" || call.Name != "get_weather" || string(call.Input) != `{"city":"Paris"}` || !strings.HasPrefix(call.ID, "toolu_") {
			t.Fatalf("streamed=%v: tool_use block %+v (input %s)", streamed, call, call.Input)
		}
		params.Messages = append(append([]anthropic.MessageParam{}, first...), msg.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(call.ID, "sunny, 21 C", false)))
		resp, err := c.Messages.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != anthropic.StopReasonEndTurn || len(resp.Content) != 1 || resp.Content[0].Text != "It is sunny in Paris." {
			t.Errorf("streamed=%v: final answer %+v stop %q", streamed, resp.Content, resp.StopReason)
		}
	}
}

func TestAnthropicThinking(t *testing.T) {
	eng, _ := scriptEngine(t, func(string) string {
		return "<think>\nThe user greets me.\n</think>\n\nHello there."
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	c := anthropicSDK(ts)
	params := anthropic.MessageNewParams{Model: "x", MaxTokens: 100, Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	resp, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	streamed, types := anthropicStream(t, c, params)
	for i, msg := range []anthropic.Message{*resp, streamed} {
		if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "The user greets me." ||
			msg.Content[1].Type != "text" || msg.Content[1].Text != "Hello there." || msg.StopReason != anthropic.StopReasonEndTurn {
			t.Errorf("response %d: %+v stop %q", i, msg.Content, msg.StopReason)
		}
	}
	if n := strings.Count(strings.Join(types, " "), "content_block_start"); n != 2 {
		t.Errorf("%d content blocks started in %v", n, types)
	}
}

func TestAnthropicCountTokens(t *testing.T) {
	eng := demoEngine(t)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}, Context: 64})
	want := len(eng.Tok.Encode(chatMLPrompt(t, "Count me."), tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true}))
	c := anthropicSDK(ts)
	resp, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: "x", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Count me."))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if int(resp.InputTokens) != want {
		t.Errorf("input_tokens %d, want %d", resp.InputTokens, want)
	}
	// A prompt beyond the context is still counted.
	long := strings.Repeat("word ", 100)
	code, body := ts.post(t, "/v1/messages/count_tokens", `{"model":"x","messages":[{"role":"user","content":"`+long+`"}]}`)
	var r struct {
		InputTokens int `json:"input_tokens"`
	}
	if json.Unmarshal([]byte(body), &r); code != 200 || r.InputTokens <= 64 {
		t.Errorf("long prompt: %d %s", code, body)
	}
}

func TestAnthropicErrorsAndKey(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, APIKey: "s3cret"})
	user := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}
	ctx := context.Background()
	var ae *anthropic.Error
	bad := anthropicSDK(ts)
	_, err := bad.Messages.New(ctx, anthropic.MessageNewParams{Model: "x", MaxTokens: 2, Messages: user})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized || !strings.Contains(ae.RawJSON(), `"authentication_error"`) {
		t.Fatalf("wrong key: %v", err)
	}
	good := anthropicSDK(ts, aoption.WithAPIKey("s3cret")) // sent as X-Api-Key
	if _, err := good.Messages.New(ctx, anthropic.MessageNewParams{Model: "x", MaxTokens: 2, Messages: user}); err != nil {
		t.Fatalf("right key: %v", err)
	}
	_, err = good.Messages.New(ctx, anthropic.MessageNewParams{Model: "x", MaxTokens: 2, Messages: user},
		aoption.WithJSONSet("temperature", -1))
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.RawJSON(), `"invalid_request_error"`) ||
		!strings.Contains(ae.RawJSON(), "temperature") {
		t.Fatalf("bad temperature: %v", err)
	}
}
