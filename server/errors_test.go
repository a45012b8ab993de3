package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"trit/sample"
)

func TestBadInput(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, Context: 256, MaxBodyBytes: 4096, APIKey: "k"})
	auth := []string{"Authorization", "Bearer k"}
	msg := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		status                   int
		param, code              string
	}{
		{"malformed JSON", "POST", "/v1/chat/completions", `{"messages": [`, auth, 400, "", "invalid_json"},
		{"empty body", "POST", "/v1/chat/completions", ``, auth, 400, "", ""},
		{"not an object", "POST", "/v1/chat/completions", `[1,2]`, auth, 400, "", ""},
		{"messages not an array", "POST", "/v1/chat/completions", `{"messages":"hi"}`, auth, 400, "messages", ""},
		{"no messages", "POST", "/v1/chat/completions", `{"messages":[]}`, auth, 400, "messages", ""},
		{"content a number", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, auth, 400, "content", ""},
		{"image part without a tower", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, auth, 400, "messages", ""},
		{"unknown part", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"video","video":{}}]}]}`, auth, 400, "content", ""},
		{"unknown role", "POST", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"hi"}]}`, auth, 400, "messages[0].role", ""},
		{"max_tokens a string", "POST", "/v1/chat/completions", `{` + msg + `,"max_tokens":"ten"}`, auth, 400, "max_tokens", ""},
		{"max_tokens negative", "POST", "/v1/chat/completions", `{` + msg + `,"max_tokens":-1}`, auth, 400, "max_tokens", "invalid_value"},
		{"max_tokens zero", "POST", "/v1/chat/completions", `{` + msg + `,"max_tokens":0}`, auth, 400, "max_tokens", "invalid_value"},
		{"max_tokens absurd", "POST", "/v1/chat/completions", `{` + msg + `,"max_tokens":1000000000000}`, auth, 400, "max_tokens", "invalid_value"},
		{"max_completion_tokens absurd", "POST", "/v1/chat/completions", `{` + msg + `,"max_completion_tokens":100000}`, auth, 400, "max_completion_tokens", "invalid_value"},
		{"max_tokens fractional", "POST", "/v1/chat/completions", `{` + msg + `,"max_tokens":1.5}`, auth, 400, "max_tokens", ""},
		{"temperature a string", "POST", "/v1/chat/completions", `{` + msg + `,"temperature":"hot"}`, auth, 400, "temperature", ""},
		{"temperature negative", "POST", "/v1/chat/completions", `{` + msg + `,"temperature":-1}`, auth, 400, "temperature", ""},
		{"top_p above 1", "POST", "/v1/chat/completions", `{` + msg + `,"top_p":2}`, auth, 400, "top_p", ""},
		{"top_k negative", "POST", "/v1/chat/completions", `{` + msg + `,"top_k":-3}`, auth, 400, "top_k", ""},
		{"penalty out of range", "POST", "/v1/chat/completions", `{` + msg + `,"presence_penalty":9}`, auth, 400, "presence_penalty", ""},
		{"seed not an integer", "POST", "/v1/chat/completions", `{` + msg + `,"seed":1.5}`, auth, 400, "seed", ""},
		{"n above 1", "POST", "/v1/chat/completions", `{` + msg + `,"n":3}`, auth, 400, "n", ""},
		{"stop a number", "POST", "/v1/chat/completions", `{` + msg + `,"stop":7}`, auth, 400, "stop", ""},
		{"stream a string", "POST", "/v1/chat/completions", `{` + msg + `,"stream":"yes"}`, auth, 400, "stream", ""},
		{"enable_thinking a string", "POST", "/v1/chat/completions", `{` + msg + `,"chat_template_kwargs":{"enable_thinking":"no"}}`, auth, 400, "chat_template_kwargs.enable_thinking", ""},
		{"unknown response_format", "POST", "/v1/chat/completions", `{` + msg + `,"response_format":{"type":"xml"}}`, auth, 400, "response_format.type", ""},
		{"prompt longer than the context", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 300) + `"}]}`, auth, 400, "messages", "context_length_exceeded"},
		{"body over the limit", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, auth, 413, "", "request_too_large"},
		{"no API key", "POST", "/v1/chat/completions", `{` + msg + `}`, nil, 401, "", "invalid_api_key"},
		{"wrong API key", "GET", "/v1/models", ``, []string{"Authorization", "Bearer nope"}, 401, "", "invalid_api_key"},
		{"completion without prompt", "POST", "/v1/completions", `{"max_tokens":2}`, auth, 400, "prompt", ""},
		{"completion empty prompt", "POST", "/v1/completions", `{"prompt":[]}`, auth, 400, "prompt", ""},
		{"completion two prompts", "POST", "/v1/completions", `{"prompt":["a","b"]}`, auth, 400, "prompt", ""},
		{"completion bad token", "POST", "/v1/completions", `{"prompt":[99999]}`, auth, 400, "prompt", ""},
		{"completion prompt an object", "POST", "/v1/completions", `{"prompt":{"a":1}}`, auth, 400, "prompt", ""},
		{"completion long prompt", "POST", "/v1/completions", `{"prompt":"` + strings.Repeat("y", 300) + `"}`, auth, 400, "prompt", "context_length_exceeded"},
		{"detokenize bad token", "POST", "/detokenize", `{"tokens":[1,-5]}`, auth, 400, "tokens[1]", ""},
		{"tokenize content a number", "POST", "/tokenize", `{"content":5}`, auth, 400, "content", ""},
		{"unknown endpoint", "GET", "/v1/nothing", ``, auth, 404, "", "not_found"},
		{"wrong method", "GET", "/v1/chat/completions", ``, auth, 405, "", "method_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			code, body := ts.do(t, req)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, body)
			}
			var e struct {
				Error map[string]*string `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("not an error object: %s", body)
			}
			for _, k := range []string{"message", "type", "param", "code"} {
				if _, ok := e.Error[k]; !ok {
					t.Errorf("error object lacks %q: %s", k, body)
				}
			}
			if m := e.Error["message"]; m == nil || *m == "" {
				t.Errorf("no message: %s", body)
			}
			if p := e.Error["param"]; (p == nil) != (tc.param == "") || (p != nil && *p != tc.param) {
				t.Errorf("param in %s, want %q", body, tc.param)
			}
			if c := e.Error["code"]; tc.code != "" && (c == nil || *c != tc.code) {
				t.Errorf("code in %s, want %q", body, tc.code)
			}
		})
	}
}

// TestUnknownFieldsIgnored sends fields the server does not know, as real
// clients do (logit_bias, user, metadata, ...): they must not cause a 400.
func TestUnknownFieldsIgnored(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	code, body := ts.post(t, "/v1/chat/completions", `{"model":"whatever","messages":[{"role":"developer","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"there"}],"extra":1}],
		"max_tokens":2,"logit_bias":{"5":1},"user":"u","metadata":{"a":"b"},"parallel_tool_calls":true,"store":false,
		"stop":null,"stream_options":null,"seed":-1,"reasoning_effort":"low"}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	code, body = ts.post(t, "/v1/completions", `{"prompt":"x","max_tokens":1,"echo":false,"best_of":1,"suffix":null}`)
	if code != 200 {
		t.Fatalf("completions: %d %s", code, body)
	}
}

// FuzzChatRequest feeds arbitrary bodies through the request decoding and
// validation: any outcome but a panic is fine, and errors are API errors.
func FuzzChatRequest(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stop":["a"]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"seed":18446744073709551615}`)
	f.Add(`{"messages":[{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]}]}`)
	f.Add(`{"prompt":[[1,2]],"temperature":1e309}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		w := httptest.NewRecorder()
		var req chatRequest
		if err := decodeBody(w, r, 1<<16, &req); err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("decode error %T %v", err, err)
			}
			return
		}
		if _, err := toChat(req.Messages); err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("toChat error %T", err)
			}
		}
		if _, err := req.params(4096, 16, sample.DefaultParams(), func() uint64 { return 1 }); err != nil {
			if _, ok := err.(*APIError); !ok {
				t.Fatalf("params error %T", err)
			}
		}
		var creq completionRequest
		if decodeBody(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), 1<<16, &creq) == nil && creq.Prompt != nil {
			promptIDs(creq.Prompt, fuzzTok(t))
		}
	})
}

func TestCORSPreflight(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}, APIKey: "k"})
	req, _ := http.NewRequest("OPTIONS", ts.URL+"/v1/chat/completions", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	code, _ := ts.get(t, "/v1/models", "Origin", "http://localhost:3000")
	if code != 401 {
		t.Errorf("a cross-origin request without the key: %d, want 401", code)
	}
}
