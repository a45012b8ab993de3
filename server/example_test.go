package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"trit/engine"
	"trit/model"
	"trit/model/demo"
	_ "trit/model/llama"
	"trit/server"
	"trit/tokenizer"
)

// Example serves the built-in demo model on loopback and asks it for a
// chat completion, as an OpenAI client would.
func Example() {
	f, err := demo.File()
	if err != nil {
		panic(err)
	}
	m, err := model.FromFile(f, model.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	tok, err := tokenizer.FromMetadata(f)
	if err != nil {
		panic(err)
	}
	eng := &engine.Engine{Model: m, Tok: tok, EOG: tokenizer.EndOfGeneration(f, tok)}

	srv, err := server.New(server.Config{
		Backend:  &server.Backend{Engine: eng, ModelID: "demo"},
		Parallel: 2,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Shutdown(context.Background())

	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"demo","messages":[{"role":"user","content":"Hello"}],"max_tokens":5,"temperature":0}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model   string
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, out.Model, out.Choices[0].FinishReason, out.Usage.CompletionTokens)
	// Output: 200 demo length 5
}
