package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"trit/engine"
	"trit/grammar"
	"trit/sample"
	"trit/tokenizer"
)

func TestReasoningSplit(t *testing.T) {
	eng, _ := scriptEngine(t, func(string) string {
		return "<think>\nThe user greets me.\n</think>\n\nHello there."
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	code, body := ts.post(t, "/v1/chat/completions", chatBody("hi", 100, false))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var resp chatResponse
	json.Unmarshal([]byte(body), &resp)
	m := resp.Choices[0].Message
	if m.ReasoningContent != "The user greets me." || m.Content == nil || *m.Content != "Hello there." {
		t.Errorf("reasoning %q content %v", m.ReasoningContent, m.Content)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(chatBody("hi", 100, true)))
	r, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	data, err := readSSE(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := checkChatStream(data, true)
	if err != nil || sr.reasoning != "The user greets me." || sr.content != "Hello there." || sr.finish != "stop" {
		t.Errorf("stream: %v reasoning %q content %q finish %q", err, sr.reasoning, sr.content, sr.finish)
	}
}

// TestSamplingMatchesEngine checks stop strings, seeded sampling and the
// penalties against engine.Generate with the same settings.
func TestSamplingMatchesEngine(t *testing.T) {
	ref := demoEngine(t)
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, Parallel: 2})
	const prompt, n = "Stop me if you can", 24
	full := greedy(t, ref, prompt, n)
	if len(full) < 12 {
		t.Fatalf("greedy output %q too short to cut", full)
	}
	stop := full[8:11]
	seeded := sample.DefaultParams()
	seeded.Temperature, seeded.TopK, seeded.Seed, seeded.PresencePenalty = 0.9, 40, 42, 0.5
	for _, tc := range []struct {
		name   string
		fields string
		p      engine.Params
	}{
		{"stop string", fmt.Sprintf(`"temperature":0,"stop":[%q,"zzzzzz"]`, stop), engine.Params{Stop: []string{stop, "zzzzzz"}}},
		{"seeded sampling", `"temperature":0.9,"top_k":40,"seed":42,"presence_penalty":0.5`, engine.Params{Sample: seeded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.MaxTokens = n
			ids := ref.Tok.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
			st, _ := ref.Model.NewState(4096)
			want, err := ref.Generate(context.Background(), st, ids, tc.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			code, body := ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,%s}`, prompt, n, tc.fields))
			if code != 200 {
				t.Fatalf("%d %s", code, body)
			}
			var resp completionResponse
			json.Unmarshal([]byte(body), &resp)
			if got := resp.Choices[0]; got.Text != want.Text || *got.FinishReason != want.FinishReason {
				t.Errorf("got %q (%s), engine.Generate gives %q (%s)", got.Text, *got.FinishReason, want.Text, want.FinishReason)
			}
		})
	}
}

func TestJSONMode(t *testing.T) {
	// A model that follows the format: the constraint lets everything
	// through and the answer ends at the closing brace.
	obj := `{"answer": 42, "list": [1, -2.5e3, true, null, "x\u00e9"], "nested": {}}`
	eng, _ := scriptEngine(t, func(string) string { return obj + " and more text" }, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	body := `{"messages":[{"role":"user","content":"json please"}],"max_tokens":200,"response_format":{"type":"json_object"}}`
	code, resp := ts.post(t, "/v1/chat/completions", body)
	if code != 200 {
		t.Fatalf("%d %s", code, resp)
	}
	var r chatResponse
	json.Unmarshal([]byte(resp), &r)
	if c := r.Choices[0]; *c.Message.Content != obj || c.FinishReason != "stop" {
		t.Errorf("content %q finish %q, want %q", *c.Message.Content, c.FinishReason, obj)
	}

	// The demo model's random text is forced into the grammar.
	ts2 := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	code, resp = ts2.post(t, "/v1/chat/completions", strings.Replace(body, `"max_tokens":200`, `"max_tokens":60,"temperature":0`, 1))
	if code != 200 {
		t.Fatalf("%d %s", code, resp)
	}
	json.Unmarshal([]byte(resp), &r)
	text := *r.Choices[0].Message.Content
	if !strings.HasPrefix(strings.TrimSpace(text), "{") || !grammar.JSONObject().MatchPrefix(text) {
		t.Errorf("demo output %q is not a JSON object prefix", text)
	}
	if r.Choices[0].FinishReason == "stop" && !json.Valid([]byte(text)) {
		t.Errorf("finished output %q is not valid JSON", text)
	}
}

func TestTokenize(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	code, body := ts.post(t, "/tokenize", `{"content":"hi<|im_end|>"}`)
	if code != 200 || strings.TrimSpace(body) != `{"tokens":[104,105,258]}` {
		t.Fatalf("tokenize: %d %s", code, body)
	}
	code, body = ts.post(t, "/tokenize", `{"content":"hi","with_pieces":true}`)
	if code != 200 || strings.TrimSpace(body) != `{"tokens":[{"id":104,"piece":"h"},{"id":105,"piece":"i"}]}` {
		t.Fatalf("tokenize with pieces: %d %s", code, body)
	}
	code, body = ts.post(t, "/tokenize", `{"content":""}`)
	if code != 200 || strings.TrimSpace(body) != `{"tokens":[]}` {
		t.Fatalf("tokenize empty: %d %s", code, body)
	}
	code, body = ts.post(t, "/detokenize", `{"tokens":[104,105]}`)
	if code != 200 || strings.TrimSpace(body) != `{"content":"hi"}` {
		t.Fatalf("detokenize: %d %s", code, body)
	}
}

// TestModelFailure makes Forward fail and panic: the request gets a 500
// error object (or an error event when streamed) and the server goes on.
func TestModelFailure(t *testing.T) {
	eng, sm := scriptEngine(t, func(string) string { return "fine" }, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng}})
	for _, mode := range []string{"error", "panic"} {
		sm.fail.Store(mode)
		code, body := ts.post(t, "/v1/chat/completions", chatBody("hi", 5, false))
		if code != 500 || !strings.Contains(body, `"type":"server_error"`) {
			t.Errorf("%s: %d %s", mode, code, body)
		}
		code, body = ts.post(t, "/v1/chat/completions", chatBody("hi", 5, true))
		if code != 200 || !strings.Contains(body, `data: {"error":`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Errorf("%s streamed: %d %s", mode, code, body)
		}
		sm.fail.Store("")
		code, body = ts.post(t, "/v1/chat/completions", chatBody("hi", 5, false))
		if code != 200 || !strings.Contains(body, `"content":"fine"`) {
			t.Errorf("after the %s: %d %s", mode, code, body)
		}
	}
}

// TestEnableThinking checks that chat_template_kwargs reach the template:
// with thinking off, ChatML gets an empty <think></think> block (two
// control tokens and four newlines with the demo vocabulary).
func TestEnableThinking(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	promptTokens := func(extra string) int {
		code, body := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1`+extra+`}`)
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		var r chatResponse
		json.Unmarshal([]byte(body), &r)
		return r.Usage.PromptTokens
	}
	on := promptTokens(`,"chat_template_kwargs":{"enable_thinking":true}`)
	if d := promptTokens(`,"chat_template_kwargs":{"enable_thinking":false}`) - on; d != 6 {
		t.Errorf("thinking off adds %d prompt tokens, want 6", d)
	}
	if d := promptTokens("") - on; d != 0 {
		t.Errorf("the default differs from thinking on by %d tokens", d)
	}
}
