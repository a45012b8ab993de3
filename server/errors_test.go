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

		// Anthropic Messages: the envelope has no param; code is the
		// error's type.
		{"messages malformed JSON", "POST", "/v1/messages", `{"max_tokens":5,`, auth, 400, "", "invalid_request_error"},
		{"messages without max_tokens", "POST", "/v1/messages", `{` + msg + `}`, auth, 400, "", "invalid_request_error"},
		{"messages max_tokens zero", "POST", "/v1/messages", `{` + msg + `,"max_tokens":0}`, auth, 400, "", "invalid_request_error"},
		{"messages empty", "POST", "/v1/messages", `{"messages":[],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages system role", "POST", "/v1/messages", `{"messages":[{"role":"system","content":"x"}],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages image block", "POST", "/v1/messages", `{"messages":[{"role":"user","content":[{"type":"image","source":{}}]}],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages content a number", "POST", "/v1/messages", `{"messages":[{"role":"user","content":5}],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages tool_use input an array", "POST", "/v1/messages", `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages temperature", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"temperature":-1}`, auth, 400, "", "invalid_request_error"},
		{"messages top_k", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"top_k":-1}`, auth, 400, "", "invalid_request_error"},
		{"messages thinking type", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"thinking":{"type":"maybe"}}`, auth, 400, "", "invalid_request_error"},
		{"messages tool_choice type", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"tool_choice":{"type":"all"}}`, auth, 400, "", "invalid_request_error"},
		{"messages input_schema an array", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"tools":[{"name":"f","input_schema":[1]}]}`, auth, 400, "", "invalid_request_error"},
		{"messages server tool", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, auth, 400, "", "invalid_request_error"},
		{"messages too many stops", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5,"stop_sequences":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]}`, auth, 400, "", "invalid_request_error"},
		{"messages long prompt", "POST", "/v1/messages", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 300) + `"}],"max_tokens":5}`, auth, 400, "", "invalid_request_error"},
		{"messages body over the limit", "POST", "/v1/messages", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, auth, 413, "", "request_too_large"},
		{"messages no API key", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5}`, nil, 401, "", "authentication_error"},
		{"messages wrong x-api-key", "POST", "/v1/messages", `{` + msg + `,"max_tokens":5}`, []string{"X-Api-Key", "nope"}, 401, "", "authentication_error"},
		{"messages wrong method", "GET", "/v1/messages", ``, auth, 405, "", "invalid_request_error"},
		{"count_tokens no messages", "POST", "/v1/messages/count_tokens", `{"model":"x"}`, auth, 400, "", "invalid_request_error"},

		// Ollama: {"error": message}; param is a word the message must hold.
		{"ollama malformed JSON", "POST", "/api/chat", `{"model":`, auth, 400, "JSON", ""},
		{"ollama no model", "POST", "/api/chat", `{` + msg + `}`, auth, 400, "model", ""},
		{"ollama unknown model", "POST", "/api/chat", `{"model":"llama3",` + msg + `}`, auth, 404, "llama3", ""},
		{"ollama bad role", "POST", "/api/chat", `{"model":"trit","messages":[{"role":"wizard","content":"x"}]}`, auth, 400, "wizard", ""},
		{"ollama images", "POST", "/api/chat", `{"model":"trit","messages":[{"role":"user","content":"x","images":["aGk="]}]}`, auth, 400, "images", ""},
		{"ollama tool arguments a string", "POST", "/api/chat", `{"model":"trit","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"x"}}]}]}`, auth, 400, "arguments", ""},
		{"ollama think", "POST", "/api/chat", `{"model":"trit",` + msg + `,"think":"maximal"}`, auth, 400, "think", ""},
		{"ollama format", "POST", "/api/chat", `{"model":"trit",` + msg + `,"format":"yaml"}`, auth, 400, "format", ""},
		{"ollama temperature a string", "POST", "/api/chat", `{"model":"trit",` + msg + `,"options":{"temperature":"hot"}}`, auth, 400, "temperature", ""},
		{"ollama top_p", "POST", "/api/chat", `{"model":"trit",` + msg + `,"options":{"top_p":3}}`, auth, 400, "top_p", ""},
		{"ollama num_ctx", "POST", "/api/chat", `{"model":"trit",` + msg + `,"options":{"num_ctx":0}}`, auth, 400, "num_ctx", ""},
		{"ollama prompt over num_ctx", "POST", "/api/chat", `{"model":"trit",` + msg + `,"options":{"num_ctx":4}}`, auth, 400, "context", ""},
		{"ollama long prompt", "POST", "/api/generate", `{"model":"trit","prompt":"` + strings.Repeat("y", 300) + `"}`, auth, 400, "context", ""},
		{"ollama suffix", "POST", "/api/generate", `{"model":"trit","prompt":"a","suffix":"b"}`, auth, 400, "suffix", ""},
		{"ollama template", "POST", "/api/generate", `{"model":"trit","prompt":"a","template":"{{ .Prompt }}"}`, auth, 400, "template", ""},
		{"ollama context", "POST", "/api/generate", `{"model":"trit","prompt":"a","context":[1,2]}`, auth, 400, "context", ""},
		{"ollama show unknown", "POST", "/api/show", `{"model":"nope"}`, auth, 404, "nope", ""},
		{"ollama no API key", "GET", "/api/tags", ``, nil, 401, "API key", ""},
		{"ollama wrong method", "GET", "/api/chat", ``, auth, 405, "POST", ""},
		{"ollama unknown endpoint", "POST", "/api/pull", `{"model":"x"}`, auth, 404, "no endpoint", ""},

		// OpenAI Responses: OpenAI's envelope.
		{"responses previous_response_id", "POST", "/v1/responses", `{"input":"hi","previous_response_id":"resp_1"}`, auth, 400, "previous_response_id", ""},
		{"responses conversation", "POST", "/v1/responses", `{"input":"hi","conversation":"conv_1"}`, auth, 400, "conversation", ""},
		{"responses no input", "POST", "/v1/responses", `{"model":"x"}`, auth, 400, "input", ""},
		{"responses input a number", "POST", "/v1/responses", `{"input":5}`, auth, 400, "input", ""},
		{"responses item type", "POST", "/v1/responses", `{"input":[{"type":"computer_call_output"}]}`, auth, 400, "input[0].type", ""},
		{"responses role", "POST", "/v1/responses", `{"input":[{"role":"wizard","content":"x"}]}`, auth, 400, "input[0].role", ""},
		{"responses image part", "POST", "/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]}`, auth, 400, "input[0].content", ""},
		{"responses max_output_tokens", "POST", "/v1/responses", `{"input":"hi","max_output_tokens":0}`, auth, 400, "max_output_tokens", "invalid_value"},
		{"responses reasoning effort", "POST", "/v1/responses", `{"input":"hi","reasoning":{"effort":"max"}}`, auth, 400, "reasoning.effort", ""},
		{"responses web search tool", "POST", "/v1/responses", `{"input":"hi","tools":[{"type":"web_search"}]}`, auth, 400, "tools[0].type", ""},
		{"responses parameters a string", "POST", "/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"f","parameters":"x"}]}`, auth, 400, "tools[0].parameters", ""},
		{"responses text format", "POST", "/v1/responses", `{"input":"hi","text":{"format":{"type":"xml"}}}`, auth, 400, "text.format.type", ""},
		{"responses long prompt", "POST", "/v1/responses", `{"input":"` + strings.Repeat("z", 300) + `"}`, auth, 400, "input", "context_length_exceeded"},
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
			switch {
			case strings.HasPrefix(tc.path, "/v1/messages"):
				checkAnthropicError(t, body, tc.code)
				return
			case strings.HasPrefix(tc.path, "/api/"):
				checkOllamaError(t, body, tc.param)
				return
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

// checkAnthropicError checks Anthropic's envelope with error type typ.
func checkAnthropicError(t *testing.T, body, typ string) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "error" || e.Error.Type != typ || e.Error.Message == "" {
		t.Errorf("not an Anthropic %s error object: %s", typ, body)
	}
}

// checkOllamaError checks Ollama's envelope with a message holding word.
func checkOllamaError(t *testing.T, body, word string) {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal([]byte(body), &e); err != nil || len(e) != 1 {
		t.Fatalf("not an Ollama error object: %s", body)
	}
	if m, ok := e["error"].(string); !ok || !strings.Contains(m, word) {
		t.Errorf("error message %s lacks %q", body, word)
	}
}

// TestUnknownFieldsIgnored sends fields the server does not know, as real
// clients do (logit_bias, user, metadata, cache_control, keep_alive, ...):
// they must not cause a 400 on any of the APIs.
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
	for path, body := range map[string]string{
		"/v1/messages": `{"model":"claude-opus-4","max_tokens":2,"metadata":{"user_id":"u"},"service_tier":"auto",
			"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],
			"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],
			"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"thinking":{"type":"disabled"}}`,
		"/api/chat": `{"model":"trit:latest","messages":[{"role":"user","content":"hi"}],"stream":false,"keep_alive":"5m",
			"options":{"num_predict":2,"num_thread":2,"mirostat":0,"num_gpu":99,"repeat_last_n":64},"truncate":true}`,
		"/api/generate": `{"model":"trit","prompt":"hi","stream":false,"keep_alive":300,"options":{"num_predict":2},"think":false}`,
		"/v1/responses": `{"model":"gpt-5","input":[{"role":"developer","content":"be brief"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello","annotations":[]}]},{"role":"user","content":"again"}],
			"max_output_tokens":2,"store":false,"metadata":{"a":"b"},"user":"u","parallel_tool_calls":true,"truncation":"auto",
			"reasoning":{"effort":"minimal","summary":"auto"},"text":{"format":{"type":"text"},"verbosity":"low"},"tool_choice":"auto"}`,
	} {
		if code, resp := ts.post(t, path, body); code != 200 {
			t.Errorf("%s: %d %s", path, code, resp)
		}
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

// FuzzAPIRequests feeds arbitrary bodies through the decoding and
// translation of the Anthropic, Ollama and Responses requests: any outcome
// but a panic is fine, and errors are API errors.
func FuzzAPIRequests(f *testing.F) {
	f.Add(`{"max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}],"tools":[{"name":"f","input_schema":{}}],"thinking":{"type":"enabled"}}`)
	f.Add(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}],"options":{"num_predict":-1,"num_ctx":9,"stop":["x"]},"format":{"type":"object"},"think":"low"}`)
	f.Add(`{"model":"m","prompt":"p","system":"s","raw":true,"options":{"seed":-1}}`)
	f.Add(`{"input":[{"type":"reasoning","content":[{"type":"reasoning_text","text":"r"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],"reasoning":{"effort":"none"},"tools":[{"type":"function","name":"f"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		tok := fuzzTok(t)
		decode := func(v any) bool {
			err := decodeBody(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), 1<<16, v)
			if _, ok := err.(*APIError); err != nil && !ok {
				t.Fatalf("decode error %T %v", err, err)
			}
			return err == nil
		}
		check := func(req *genRequest, err error) {
			if _, ok := err.(*APIError); err != nil && !ok {
				t.Fatalf("translation error %T %v", err, err)
			}
			if err == nil {
				if _, err := req.sampling.params(4096, 16, sample.DefaultParams(), func() uint64 { return 1 }); err != nil {
					if _, ok := err.(*APIError); !ok {
						t.Fatalf("params error %T", err)
					}
				}
			}
		}
		var a anthropicRequest
		if decode(&a) {
			check(a.request())
		}
		var oc ollamaChatRequest
		if decode(&oc) {
			check(oc.request())
		}
		var og ollamaGenerateRequest
		if decode(&og) {
			check(og.request(tok))
		}
		var rq responsesRequest
		if decode(&rq) {
			check(rq.request())
		}
	})
}
