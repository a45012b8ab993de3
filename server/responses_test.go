package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// responsesStream runs params streamed and returns the final response,
// the text gathered from the deltas and the event types in order.
func responsesStream(t *testing.T, c openai.Client, params responses.ResponseNewParams) (responses.Response, string, []string) {
	t.Helper()
	stream := c.Responses.NewStreaming(context.Background(), params)
	var final responses.Response
	var text strings.Builder
	var types []string
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed", "response.incomplete":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return final, text.String(), types
}

func TestResponsesText(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Say something.", 12
	want := greedy(t, ref, chatMLPrompt(t, user), n)
	params := responses.ResponseNewParams{
		Model:           "demo",
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String(user)},
		MaxOutputTokens: openai.Int(n),
		Temperature:     openai.Float(0),
	}
	for _, streamed := range []bool{false, true} {
		ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
		c := sdk(ts)
		var resp responses.Response
		text := ""
		if streamed {
			var types []string
			resp, text, types = responsesStream(t, c, params)
			seq := strings.Join(types, " ")
			if !strings.HasPrefix(seq, "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta") ||
				!strings.HasSuffix(seq, "response.output_text.done response.content_part.done response.output_item.done response.incomplete") {
				t.Errorf("event sequence %s", seq)
			}
		} else {
			r, err := c.Responses.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			resp, text = *r, r.OutputText()
		}
		if text != want || resp.OutputText() != want {
			t.Errorf("streamed=%v: text %q / %q, want %q", streamed, text, resp.OutputText(), want)
		}
		if resp.Status != responses.ResponseStatusIncomplete || resp.IncompleteDetails.Reason != "max_output_tokens" ||
			resp.Usage.OutputTokens != n || resp.Usage.InputTokens == 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+n ||
			!strings.HasPrefix(resp.ID, "resp_") {
			t.Errorf("streamed=%v: status %q details %+v usage %+v id %q", streamed, resp.Status, resp.IncompleteDetails, resp.Usage, resp.ID)
		}
	}
}

func TestResponsesToolRoundTrip(t *testing.T) {
	eng, _ := scriptEngine(t, toolReply, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, ModelID: "script"}})
	c := sdk(ts)
	tool := responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}, false)
	first := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser)}
	for _, streamed := range []bool{false, true} {
		params := responses.ResponseNewParams{Model: "script", Instructions: openai.String("Be brief."),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: first}, Tools: []responses.ToolUnionParam{tool}}
		var resp responses.Response
		if streamed {
			var types []string
			resp, _, types = responsesStream(t, c, params)
			if seq := strings.Join(types, " "); !strings.Contains(seq, "response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed") {
				t.Errorf("event sequence %s", seq)
			}
		} else {
			r, err := c.Responses.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			resp = *r
		}
		if resp.Status != responses.ResponseStatusCompleted || len(resp.Output) != 2 || resp.OutputText() != "Let me check." {
			t.Fatalf("streamed=%v: status %q output %+v", streamed, resp.Status, resp.Output)
		}
		call := resp.Output[1].AsFunctionCall()
		if resp.Output[1].Type != "function_call" || call.Name != "get_weather" || call.Arguments != `{"city":"Paris"}` ||
			call.CallID == "" || !strings.HasPrefix(call.ID, "fc_") {
			t.Fatalf("streamed=%v: call %+v", streamed, call)
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny, 21 C")
		out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
		params.Input.OfInputItemList = append(append(responses.ResponseInputParam{}, first...),
			responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name), out)
		r, err := c.Responses.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "It is sunny in Paris." || r.Status != responses.ResponseStatusCompleted {
			t.Errorf("streamed=%v: final answer %q status %q", streamed, r.OutputText(), r.Status)
		}
	}
}

func TestResponsesReasoning(t *testing.T) {
	eng, _ := scriptEngine(t, func(string) string {
		return "<think>\nThe user greets me.\n</think>\n\nHello there."
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	c := sdk(ts)
	params := responses.ResponseNewParams{Model: "x", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh}}
	r, err := c.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	streamed, _, types := responsesStream(t, c, params)
	for i, resp := range []responses.Response{*r, streamed} {
		if len(resp.Output) != 2 || resp.Output[0].Type != "reasoning" || resp.OutputText() != "Hello there." {
			t.Fatalf("response %d: %+v", i, resp.Output)
		}
		if rs := resp.Output[0].AsReasoning(); len(rs.Content) != 1 || rs.Content[0].Text != "The user greets me." {
			t.Errorf("response %d: reasoning %+v", i, rs)
		}
	}
	if !strings.Contains(strings.Join(types, " "), "response.reasoning_text.delta") {
		t.Errorf("no reasoning deltas in %v", types)
	}
}

func TestResponsesErrors(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	c := sdk(ts)
	in := responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}
	for _, tc := range []struct {
		name   string
		params responses.ResponseNewParams
		param  string
	}{
		{"previous_response_id", responses.ResponseNewParams{Model: "x", Input: in, PreviousResponseID: openai.String("resp_123")}, "previous_response_id"},
		{"max_output_tokens", responses.ResponseNewParams{Model: "x", Input: in, MaxOutputTokens: openai.Int(0)}, "max_output_tokens"},
		{"no input", responses.ResponseNewParams{Model: "x"}, "input"},
	} {
		_, err := c.Responses.New(context.Background(), tc.params)
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != tc.param || ae.Message == "" {
			t.Errorf("%s: %v, want a 400 about %s", tc.name, err, tc.param)
		}
	}
}
