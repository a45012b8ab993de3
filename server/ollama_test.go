package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"trit/grammar"

	ollama "github.com/ollama/ollama/api"
)

// ollamaSDK returns Ollama's Go client for ts.
func ollamaSDK(t *testing.T, ts *testServer, hc *http.Client) *ollama.Client {
	t.Helper()
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	if hc == nil {
		hc = ts.client
	}
	return ollama.NewClient(u, hc)
}

// bearer adds an Authorization header to every request.
type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.rt.RoundTrip(r)
}

func TestOllamaModels(t *testing.T) {
	eng := demoEngine(t)
	arch := eng.Model.Info().Arch
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, ModelID: "demo"}, Context: 512})
	c := ollamaSDK(t, ts, nil)
	ctx := context.Background()
	if err := c.Heartbeat(ctx); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	v, err := c.Version(ctx)
	if err != nil || v != ollamaVersion {
		t.Fatalf("version %q %v", v, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Models) != 1 || list.Models[0].Name != "demo:latest" || list.Models[0].Details.Family != arch ||
		list.Models[0].Size == 0 || list.Models[0].Digest == "" {
		t.Fatalf("list %+v %v", list, err)
	}
	ps, err := c.ListRunning(ctx)
	if err != nil || len(ps.Models) != 1 || ps.Models[0].ContextLength != 512 {
		t.Fatalf("ps %+v %v", ps, err)
	}
	for _, name := range []string{"demo", "demo:latest"} {
		show, err := c.Show(ctx, &ollama.ShowRequest{Model: name})
		if err != nil || show.ModelInfo["general.architecture"] != arch || show.Template == "" || len(show.Capabilities) == 0 {
			t.Fatalf("show %s: %+v %v", name, show, err)
		}
	}
	_, err = c.Show(ctx, &ollama.ShowRequest{Model: "llama3:8b"})
	var se ollama.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || !strings.Contains(se.ErrorMessage, "llama3:8b") {
		t.Fatalf("show of an unknown model: %v", err)
	}
}

func TestOllamaChatAndGenerate(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Say something.", 12
	want := greedy(t, ref, chatMLPrompt(t, user), n)
	opts := map[string]any{"temperature": 0, "num_predict": n, "seed": 7, "num_ctx": 2048}
	for _, streamed := range []bool{false, true} {
		ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
		c := ollamaSDK(t, ts, nil)
		stream := streamed
		var text strings.Builder
		var last ollama.ChatResponse
		parts := 0
		err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "demo", Stream: &stream, Options: opts,
			Messages: []ollama.Message{{Role: "user", Content: user}}}, func(r ollama.ChatResponse) error {
			text.WriteString(r.Message.Content)
			last = r
			parts++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if text.String() != want || !last.Done || last.DoneReason != "length" || last.EvalCount != n || last.PromptEvalCount == 0 ||
			last.TotalDuration <= 0 || last.EvalDuration <= 0 || last.Model != "demo" {
			t.Errorf("streamed=%v: chat %q (want %q) final %+v", streamed, text.String(), want, last)
		}
		// Streamed: text (in as many lines as the handler's reads meet
		// the scheduler's steps), then the final object.
		if streamed && parts < 2 || !streamed && parts != 1 {
			t.Errorf("streamed=%v: %d objects", streamed, parts)
		}
	}
	// /api/generate renders the prompt with the template too.
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
	c := ollamaSDK(t, ts, nil)
	var text strings.Builder
	var last ollama.GenerateResponse
	err := c.Generate(context.Background(), &ollama.GenerateRequest{Model: "demo:latest", Prompt: user, Options: opts},
		func(r ollama.GenerateResponse) error {
			text.WriteString(r.Response)
			last = r
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != want || last.DoneReason != "length" || last.EvalCount != n {
		t.Errorf("generate %q (want %q) final %+v", text.String(), want, last)
	}
	// raw: the prompt as given, as /v1/completions takes it.
	rawWant := greedy(t, ref, "Once upon a time", n)
	ts = startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
	c = ollamaSDK(t, ts, nil)
	text.Reset()
	no := false
	err = c.Generate(context.Background(), &ollama.GenerateRequest{Model: "demo", Prompt: "Once upon a time", Raw: true, Stream: &no, Options: opts},
		func(r ollama.GenerateResponse) error {
			text.WriteString(r.Response)
			return nil
		})
	if err != nil || text.String() != rawWant {
		t.Errorf("raw generate %q, want %q (%v)", text.String(), rawWant, err)
	}
	// An empty prompt loads the model, as clients use it.
	err = c.Generate(context.Background(), &ollama.GenerateRequest{Model: "demo"}, func(r ollama.GenerateResponse) error {
		last = r
		return nil
	})
	if err != nil || !last.Done || last.DoneReason != "load" {
		t.Errorf("load: %+v %v", last, err)
	}
}

func TestOllamaStopAndJSON(t *testing.T) {
	ref := demoEngine(t)
	const user, n = "Stop me if you can", 24
	full := greedy(t, ref, chatMLPrompt(t, user), n)
	stop := full[8:11]
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t)}})
	c := ollamaSDK(t, ts, nil)
	no := false
	var resp ollama.ChatResponse
	err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "trit", Stream: &no,
		Options:  map[string]any{"temperature": 0, "num_predict": n, "stop": []string{stop}},
		Messages: []ollama.Message{{Role: "user", Content: user}}}, func(r ollama.ChatResponse) error { resp = r; return nil })
	if err != nil || resp.Message.Content != full[:strings.Index(full, stop)] || resp.DoneReason != "stop" {
		t.Errorf("stop: %q %q, want %q (%v)", resp.Message.Content, resp.DoneReason, full[:strings.Index(full, stop)], err)
	}
	// format json: the demo model's random text is forced into an object.
	err = c.Chat(context.Background(), &ollama.ChatRequest{Model: "trit", Stream: &no, Format: json.RawMessage(`"json"`),
		Options:  map[string]any{"temperature": 0, "num_predict": 40},
		Messages: []ollama.Message{{Role: "user", Content: "json please"}}}, func(r ollama.ChatResponse) error { resp = r; return nil })
	if err != nil || !strings.HasPrefix(strings.TrimSpace(resp.Message.Content), "{") || !grammar.JSONObject().MatchPrefix(resp.Message.Content) {
		t.Errorf("format json: %q (%v)", resp.Message.Content, err)
	}
}

func TestOllamaToolsAndThinking(t *testing.T) {
	eng, _ := scriptEngine(t, func(p string) string {
		if strings.Contains(p, "weather") {
			return toolReply(p)
		}
		return "<think>\nThe user greets me.\n</think>\n\nHello there."
	}, 0)
	ts := startServer(t, Config{Backend: &Backend{Engine: eng, ModelID: "script"}})
	c := ollamaSDK(t, ts, nil)
	var tools ollama.Tools
	if err := json.Unmarshal([]byte(`[{"type":"function","function":{"name":"get_weather","description":"Current weather",
		"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`), &tools); err != nil {
		t.Fatal(err)
	}
	first := []ollama.Message{{Role: "user", Content: "What is the weather in Paris?"}}
	for _, streamed := range []bool{false, true} {
		stream := streamed
		var msg ollama.Message
		var final ollama.ChatResponse
		err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "script", Stream: &stream, Tools: tools, Messages: first},
			func(r ollama.ChatResponse) error {
				msg.Content += r.Message.Content
				msg.ToolCalls = append(msg.ToolCalls, r.Message.ToolCalls...)
				final = r
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" || msg.Content != "Let me check." || final.DoneReason != "stop" {
			t.Fatalf("streamed=%v: %+v final %+v", streamed, msg, final)
		}
		if city, _ := msg.ToolCalls[0].Function.Arguments.Get("city"); city != "Paris" {
			t.Fatalf("streamed=%v: arguments %s", streamed, msg.ToolCalls[0].Function.Arguments.String())
		}
		msg.Role = "assistant"
		next := append(append([]ollama.Message{}, first...), msg, ollama.Message{Role: "tool", Content: "sunny, 21 C", ToolName: "get_weather"})
		no := false
		var resp ollama.ChatResponse
		err = c.Chat(context.Background(), &ollama.ChatRequest{Model: "script", Stream: &no, Tools: tools, Messages: next},
			func(r ollama.ChatResponse) error { resp = r; return nil })
		if err != nil || resp.Message.Content != "It is sunny in Paris." || len(resp.Message.ToolCalls) != 0 {
			t.Errorf("streamed=%v: final answer %+v (%v)", streamed, resp.Message, err)
		}
	}
	// think: the reasoning comes back in thinking.
	no := false
	var resp ollama.ChatResponse
	err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "script", Stream: &no, Think: &ollama.ThinkValue{Value: true},
		Messages: []ollama.Message{{Role: "user", Content: "hi"}}}, func(r ollama.ChatResponse) error { resp = r; return nil })
	if err != nil || resp.Message.Thinking != "The user greets me." || resp.Message.Content != "Hello there." {
		t.Errorf("think: %+v (%v)", resp.Message, err)
	}
}

func TestOllamaErrorsAndKey(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}, APIKey: "s3cret"})
	ctx := context.Background()
	var se ollama.StatusError
	chat := func(c *ollama.Client, req *ollama.ChatRequest) error {
		return c.Chat(ctx, req, func(ollama.ChatResponse) error { return nil })
	}
	user := []ollama.Message{{Role: "user", Content: "hi"}}
	err := chat(ollamaSDK(t, ts, nil), &ollama.ChatRequest{Model: "demo", Messages: user})
	var ae ollama.AuthorizationError
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Fatalf("no key: %v", err)
	}
	good := ollamaSDK(t, ts, &http.Client{Transport: bearer{"s3cret", ts.client.Transport}})
	if err := chat(good, &ollama.ChatRequest{Model: "demo", Messages: user, Options: map[string]any{"num_predict": 2}}); err != nil {
		t.Fatalf("right key: %v", err)
	}
	for _, tc := range []struct {
		name   string
		req    ollama.ChatRequest
		status int
		msg    string
	}{
		{"unknown model", ollama.ChatRequest{Model: "llama3", Messages: user}, 404, "not found"},
		{"bad temperature", ollama.ChatRequest{Model: "demo", Messages: user, Options: map[string]any{"temperature": -2}}, 400, "temperature"},
		{"images", ollama.ChatRequest{Model: "demo", Messages: []ollama.Message{{Role: "user", Content: "x", Images: []ollama.ImageData{[]byte("png")}}}}, 400, "images"},
	} {
		err := chat(good, &tc.req)
		if !errors.As(err, &se) || se.StatusCode != tc.status || !strings.Contains(se.ErrorMessage, tc.msg) {
			t.Errorf("%s: %v, want %d about %q", tc.name, err, tc.status, tc.msg)
		}
	}
}
