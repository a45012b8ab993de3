package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSameTextAllAPIs sends one prompt, greedy, through OpenAI chat
// completions, OpenAI Responses, Anthropic Messages and Ollama chat: each
// must give engine.Generate's text, since they share the template, the
// scheduler and the sampler. Each request gets a fresh server (see
// TestSDKCompletions on cached prefixes).
func TestSameTextAllAPIs(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Tell me about ternary weights.", 16
	want := greedy(t, ref, chatMLPrompt(t, user), n)
	msgs := fmt.Sprintf(`[{"role":"user","content":%q}]`, user)
	for _, tc := range []struct {
		api, path, body string
		text            func(body string) string
	}{
		{"openai chat", "/v1/chat/completions", fmt.Sprintf(`{"messages":%s,"max_tokens":%d,"temperature":0}`, msgs, n),
			func(b string) string {
				var r chatResponse
				json.Unmarshal([]byte(b), &r)
				return *r.Choices[0].Message.Content
			}},
		{"openai responses", "/v1/responses", fmt.Sprintf(`{"input":%q,"max_output_tokens":%d,"temperature":0}`, user, n),
			func(b string) string {
				var r responsesObject
				json.Unmarshal([]byte(b), &r)
				return r.Output[0].Content[0].Text
			}},
		{"anthropic", "/v1/messages", fmt.Sprintf(`{"model":"claude","messages":%s,"max_tokens":%d,"temperature":0}`, msgs, n),
			func(b string) string {
				var r anthropicMessageOut
				json.Unmarshal([]byte(b), &r)
				return *r.Content[0].Text
			}},
		{"ollama", "/api/chat", fmt.Sprintf(`{"model":"trit","messages":%s,"stream":false,"options":{"num_predict":%d,"temperature":0}}`, msgs, n),
			func(b string) string {
				var r ollamaReply
				json.Unmarshal([]byte(b), &r)
				return r.Message.Content
			}},
	} {
		ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
		code, body := ts.post(t, tc.path, tc.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", tc.api, code, body)
		}
		if got := tc.text(body); got != want {
			t.Errorf("%s: %q, want engine.Generate's %q", tc.api, got, want)
		}
	}
}

// TestAnthropicStreamWire checks the Messages stream on the wire: every
// event's name matches its data's type, as Anthropic's clients dispatch
// on either, and the blocks (text, then the tool call) come in order.
func TestAnthropicStreamWire(t *testing.T) {
	eng, _ := scriptEngine(t, toolReply, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	req := httptest.NewRequest("POST", ts.URL+"/v1/messages", strings.NewReader(`{"model":"x","max_tokens":100,"stream":true,
		"messages":[{"role":"user","content":"weather?"}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}`))
	req.RequestURI = ""
	_, body := ts.do(t, req)
	var names []string
	for _, ev := range strings.Split(strings.TrimSpace(body), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		var d struct {
			Type string `json:"type"`
		}
		if !ok || !strings.HasPrefix(name, "event: ") || json.Unmarshal([]byte(data), &d) != nil || d.Type != name[len("event: "):] {
			t.Fatalf("bad event %q", ev)
		}
		// Deltas come as the scheduler's steps meet the handler's reads.
		if n := len(names); n == 0 || d.Type != "content_block_delta" || names[n-1] != d.Type {
			names = append(names, d.Type)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

// TestModelFailureAllAPIs makes Forward fail: each API answers a 500 in
// its own envelope, or ends its stream with its own error event or line.
func TestModelFailureAllAPIs(t *testing.T) {
	eng, sm := scriptEngine(t, func(string) string { return "fine" }, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	sm.fail.Store("error")
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		api, path, body, stream, plain, streamEnd string
	}{
		{"anthropic", "/v1/messages", `{"max_tokens":5,` + msgs, `,"stream":true}`, `"type":"api_error"`,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\""},
		{"ollama", "/api/chat", `{"model":"trit",` + msgs, `}`, `{"error":"generation failed`, `{"error":"generation failed`},
		{"responses", "/v1/responses", `{"input":"hi"`, `,"stream":true}`, `"type":"server_error"`, "event: error\ndata: {"},
	} {
		plain := tc.body + "}"
		if tc.api == "ollama" {
			plain = tc.body + `,"stream":false}`
		}
		code, body := ts.post(t, tc.path, plain)
		if code != 500 || !strings.Contains(body, tc.plain) {
			t.Errorf("%s: %d %s", tc.api, code, body)
		}
		code, body = ts.post(t, tc.path, tc.body+tc.stream)
		if code != 200 || !strings.Contains(body, tc.streamEnd) {
			t.Errorf("%s streamed: %d %s", tc.api, code, body)
		}
	}
	sm.fail.Store("")
	if code, body := ts.post(t, "/api/generate", `{"model":"trit","prompt":"hi","stream":false}`); code != 200 || !strings.Contains(body, `"response":"fine"`) {
		t.Errorf("after the failures: %d %s", code, body)
	}
}
