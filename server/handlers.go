package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"trit/chat"
	"trit/tokenizer"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.ready.Load() == nil:
		writeError(w, errLoading)
	case s.draining.Load():
		writeError(w, &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "shutting_down", Message: "the server is shutting down"})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.m.write(w)
}

// modelObject is an entry of /v1/models.
type modelObject struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	OwnedBy string         `json:"owned_by"`
	Meta    map[string]any `json:"meta"`
}

func (s *Server) model(b *loadedBackend) modelObject {
	info := b.Engine.Model.Info()
	return modelObject{ID: b.ModelID, Object: "model", Created: s.created, OwnedBy: "trit", Meta: map[string]any{
		"arch": info.Arch, "n_vocab": info.Vocab, "n_ctx_train": info.ContextLen, "n_ctx_slot": b.ctx,
		"n_params": info.Params, "size": info.WeightBytes, "slots": s.cfg.Parallel,
	}}
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelObject{s.model(b)}})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	if id := r.PathValue("id"); id != b.ModelID {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist; this server has %q", id, b.ModelID)})
		return
	}
	writeJSON(w, http.StatusOK, s.model(b))
}

// usage and timings are reported with every finished generation.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type timings struct {
	CacheN             int     `json:"cache_n"`
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PromptPerSecond    float64 `json:"prompt_per_second"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

func (r *result) usage(prompt int) *usage {
	return &usage{PromptTokens: prompt, CompletionTokens: r.predictedN, TotalTokens: prompt + r.predictedN}
}

func (r *result) timings() *timings {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	rate := func(n int, d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return float64(n) / d.Seconds()
	}
	return &timings{CacheN: r.cacheN, PromptN: r.promptN, PromptMS: ms(r.promptTime), PromptPerSecond: rate(r.promptN, r.promptTime),
		PredictedN: r.predictedN, PredictedMS: ms(r.predictTime), PredictedPerSecond: rate(r.predictedN, r.predictTime)}
}

// newID returns prefix followed by random hex.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func randomSeed() uint64 { return mrand.Uint64() }

// submit queues a job and maps scheduler errors to API errors.
func (s *Server) submit(b *loadedBackend, j *job) error {
	switch err := b.sc.submit(j); {
	case errors.Is(err, ErrBusy):
		return &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "overloaded",
			Message: "all slots are busy and the queue is full; retry later"}
	case errors.Is(err, ErrShutdown):
		return &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "shutting_down", Message: "the server is shutting down"}
	case err != nil:
		return err
	}
	return nil
}

// wait blocks until j has new output or ends; false means the client is
// gone (the scheduler then drops the job at its next step).
func wait(r *http.Request, j *job) bool {
	select {
	case <-j.notify:
		return true
	case <-r.Context().Done():
		return false
	}
}

// jobError maps the error a job ended with to an API error.
func jobError(err error) error {
	if errors.Is(err, ErrShutdown) {
		return &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "shutting_down", Message: "the server shut down during the generation"}
	}
	if errors.Is(err, ErrKVBudget) {
		return &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "kv_budget_exhausted",
			Message: err.Error() + "; retry later, or start the server with a larger --kv-budget"}
	}
	return &APIError{Status: http.StatusInternalServerError, Type: "server_error", Message: "generation failed: " + err.Error()}
}

// checkPrompt validates a tokenized prompt against the slot context.
func checkPrompt(ids []int, ctx int, param string) error {
	if len(ids) == 0 {
		return badRequest(param, "the prompt is empty")
	}
	if len(ids) > ctx {
		return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "context_length_exceeded",
			Message: fmt.Sprintf("the prompt has %d tokens, more than the context size of %d", len(ids), ctx)}
	}
	return nil
}

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (e *sseWriter) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.raw(b)
}

func (e *sseWriter) raw(b []byte) error { return e.write("", b) }

// event writes v as an event named name, as the Anthropic and Responses
// streams type their events.
func (e *sseWriter) event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.write(name, b)
}

func (e *sseWriter) write(name string, b []byte) error {
	var buf bytes.Buffer
	buf.Grow(len(name) + len(b) + 16)
	if name != "" {
		buf.WriteString("event: ")
		buf.WriteString(name)
		buf.WriteByte('\n')
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	if _, err := e.w.Write(buf.Bytes()); err != nil {
		return err
	}
	return e.rc.Flush()
}

func (e *sseWriter) done() error { return e.raw([]byte("[DONE]")) }

// fail ends a stream whose generation failed: the error object a client
// can read, then [DONE].
func (e *sseWriter) fail(err error) {
	if e.data(jobError(err)) == nil {
		e.done()
	}
}

// parseKwargs splits chat_template_kwargs into enable_thinking and the
// other variables for the template.
func parseKwargs(kw map[string]json.RawMessage) (thinking *bool, extra map[string]any, err error) {
	for k, v := range kw {
		if k == "enable_thinking" {
			var t *bool
			if json.Unmarshal(v, &t) != nil {
				return nil, nil, badRequest("chat_template_kwargs.enable_thinking", "enable_thinking must be a boolean")
			}
			thinking = t
			continue
		}
		if extra == nil {
			extra = map[string]any{}
		}
		extra[k] = v
	}
	return thinking, extra, nil
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req chatRequest
	g := s.begin(w, r, b, &req)
	if g == nil {
		return
	}
	c := chatCall{id: newID("chatcmpl-"), created: time.Now().Unix(), model: b.ModelID, promptN: g.promptN}
	if g.logprobs {
		c.tok = b.Engine.Tok
	}
	if req.Stream {
		c.stream(w, r, g, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	} else {
		c.complete(w, r, g)
	}
}

// request translates a chat completion request.
func (c *chatRequest) request() (*genRequest, error) {
	msgs, err := toChat(c.Messages)
	if err != nil {
		return nil, err
	}
	thinking, extra, err := parseKwargs(c.ChatTemplateKwargs)
	if err != nil {
		return nil, err
	}
	req := &genRequest{messages: msgs, images: imageURLs(c.Messages), thinking: thinking, extra: extra,
		sampling: c.samplingFields, adjust: c.logprobParams, promptParam: "messages"}
	if len(c.Tools) > maxTools {
		return nil, badRequest("tools", "more than %d tools", maxTools)
	}
	if tc := bytes.TrimSpace(c.ToolChoice); string(tc) != `"none"` {
		req.tools = c.Tools
	}
	if req.con, err = chatConstraint(c, req.tools); err != nil {
		return nil, err
	}
	return req, nil
}

// chatOutput splits generated text into reasoning, content and tool calls.
type chatOutput struct {
	rp    chat.ReasoningParser
	tp    *chat.ToolCallParser // nil without tools
	calls int
}

// write parses a piece of text (flush: the end) into a delta.
func (o *chatOutput) write(text string, flush bool) delta {
	var d delta
	d.reasoning, d.content = o.rp.Write(text)
	if flush {
		r2, c2 := o.rp.Flush()
		d.reasoning, d.content = d.reasoning+r2, d.content+c2
	}
	if o.tp == nil {
		return d
	}
	c, cc := o.tp.Write(d.content)
	if flush {
		c2, cc2 := o.tp.Flush()
		c, cc = c+c2, append(cc, cc2...)
	}
	d.content = c
	for _, tc := range cc {
		d.calls = append(d.calls, toolCall{Index: o.calls, ID: newID("call_"), Type: "function",
			Function: toolFunction{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		o.calls++
	}
	return d
}

// Response shapes of the chat API.
type toolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatMessage struct {
	Role             string     `json:"role"`
	Content          *string    `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      chatMessage   `json:"message"`
	FinishReason string        `json:"finish_reason"`
	Logprobs     *chatLogprobs `json:"logprobs"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *usage       `json:"usage"`
	Timings           *timings     `json:"timings,omitempty"`
}

type chatDelta struct {
	Role             string     `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        chatDelta     `json:"delta"`
	FinishReason *string       `json:"finish_reason"`
	Logprobs     *chatLogprobs `json:"logprobs"`
}

type chatChunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage"`
	Timings           *timings      `json:"timings,omitempty"`
}

const fingerprint = "trit"

// chatCall is one chat completion being answered.
type chatCall struct {
	id      string
	created int64
	model   string
	promptN int
	tok     *tokenizer.Tokenizer // set when the request asks for logprobs
}

func finishReason(res result, calls int) string {
	if res.finish == "stop" && calls > 0 {
		return "tool_calls"
	}
	return res.finish
}

func (c *chatCall) complete(w http.ResponseWriter, r *http.Request, g *generation) {
	d, res, ok := g.answer(w, r)
	if !ok {
		return
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: d.reasoning, ToolCalls: d.calls}
	if d.content != "" || len(d.calls) == 0 {
		msg.Content = &d.content
	}
	writeJSON(w, http.StatusOK, chatResponse{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		SystemFingerprint: fingerprint,
		Choices:           []chatChoice{{Message: msg, FinishReason: finishReason(res, len(d.calls)), Logprobs: toChatLogprobs(c.tok, d.logprobs)}},
		Usage:             res.usage(c.promptN), Timings: res.timings()})
}

func (c *chatCall) chunk(d chatDelta, finish *string) chatChunk {
	return chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, SystemFingerprint: fingerprint,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
}

func (c *chatCall) stream(w http.ResponseWriter, r *http.Request, g *generation, includeUsage bool) {
	sse := newSSE(w)
	empty := ""
	if sse.data(c.chunk(chatDelta{Role: "assistant", Content: &empty}, nil)) != nil {
		return
	}
	calls := 0
	// Logprobs entries go out with the next chunk that carries text, and
	// the rest with the last chunk.
	var lps []tokenLogprob
	res, ok := g.each(r, func(d delta) error {
		lps = append(lps, d.logprobs...)
		if d.reasoning != "" || d.content != "" {
			cd := chatDelta{ReasoningContent: d.reasoning}
			if d.content != "" {
				cd.Content = &d.content
			}
			ch := c.chunk(cd, nil)
			ch.Choices[0].Logprobs, lps = toChatLogprobs(c.tok, lps), nil
			if err := sse.data(ch); err != nil {
				return err
			}
		}
		for _, tc := range d.calls {
			// Name and id once, then the arguments as a fragment, as
			// OpenAI streams them.
			head := tc
			head.Function.Arguments = ""
			args := toolCall{Index: tc.Index, Function: toolFunction{Arguments: tc.Function.Arguments}}
			if err := sse.data(c.chunk(chatDelta{ToolCalls: []toolCall{head}}, nil)); err != nil {
				return err
			}
			if err := sse.data(c.chunk(chatDelta{ToolCalls: []toolCall{args}}, nil)); err != nil {
				return err
			}
			calls++
		}
		return nil
	})
	if !ok {
		return
	}
	if res.err != nil {
		sse.fail(res.err)
		return
	}
	fr := finishReason(res, calls)
	last := c.chunk(chatDelta{}, &fr)
	last.Choices[0].Logprobs = toChatLogprobs(c.tok, lps)
	last.Timings = res.timings()
	if sse.data(last) != nil {
		return
	}
	if includeUsage {
		u := c.chunk(chatDelta{}, nil)
		u.Choices = []chunkChoice{}
		u.Usage = res.usage(c.promptN)
		u.Timings = res.timings()
		if sse.data(u) != nil {
			return
		}
	}
	sse.done()
}

// promptIDs reads the legacy "prompt": a string, one-string array, token
// array or one-token-array array.
func promptIDs(raw json.RawMessage, tok *tokenizer.Tokenizer) ([]int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("prompt", "prompt is required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return tok.Encode(text, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true}), nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		if len(texts) != 1 {
			return nil, badRequest("prompt", "only one prompt per request is supported")
		}
		return tok.Encode(texts[0], tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true}), nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) != nil {
		var nested [][]int
		if json.Unmarshal(raw, &nested) != nil {
			return nil, badRequest("prompt", "prompt must be a string, an array of strings or an array of token ids")
		}
		if len(nested) != 1 {
			return nil, badRequest("prompt", "only one prompt per request is supported")
		}
		ids = nested[0]
	}
	for _, id := range ids {
		if id < 0 || id >= tok.VocabSize() {
			return nil, badRequest("prompt", "token id %d is outside the vocabulary [0,%d)", id, tok.VocabSize())
		}
	}
	return ids, nil
}

type completionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

type completionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage"`
	Timings           *timings           `json:"timings,omitempty"`
}

// defaultCompletionTokens is OpenAI's max_tokens default for the legacy
// completions API.
const defaultCompletionTokens = 16

func (s *Server) completions(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req completionRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	ids, err := promptIDs(req.Prompt, b.Engine.Tok)
	if err != nil {
		writeError(w, err)
		return
	}
	con, err := req.grammarFields.constraint()
	if err != nil {
		writeError(w, err)
		return
	}
	g, err := s.start(r, b, &genRequest{raw: true, prompt: ids, sampling: req.samplingFields, con: con,
		adjust: req.logprobParams, defaultMax: defaultCompletionTokens, promptParam: "prompt"})
	if err != nil {
		writeError(w, err)
		return
	}
	resp := completionResponse{ID: newID("cmpl-"), Object: "text_completion", Created: time.Now().Unix(), Model: b.ModelID,
		SystemFingerprint: fingerprint}
	// echo returns the prompt's text before the completion's.
	echo := ""
	if req.Echo {
		echo = b.Engine.Tok.Decode(ids)
	}
	// lp collects logprobs entries (nil: not asked for); offset is the
	// byte offset of the next entry's token text.
	var lp *completionLogprobs
	offset := 0
	addLogprobs := func(es []tokenLogprob) *completionLogprobs {
		if !g.logprobs {
			return nil
		}
		if lp == nil || req.Stream {
			lp = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
		}
		offset = lp.append(b.Engine.Tok, es, offset)
		return lp
	}
	if !req.Stream {
		d, res, ok := g.answer(w, r)
		if !ok {
			return
		}
		resp.Choices = []completionChoice{{Text: echo + d.content, FinishReason: &res.finish, Logprobs: addLogprobs(d.logprobs)}}
		resp.Usage, resp.Timings = res.usage(g.promptN), res.timings()
		writeJSON(w, http.StatusOK, resp)
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	sse := newSSE(w)
	res, ok := g.each(r, func(d delta) error {
		t := echo + d.content
		echo = ""
		l := addLogprobs(d.logprobs)
		if t == "" && (l == nil || len(l.Tokens) == 0) {
			return nil
		}
		resp.Choices = []completionChoice{{Text: t, Logprobs: l}}
		return sse.data(resp)
	})
	if !ok {
		return
	}
	if res.err != nil {
		sse.fail(res.err)
		return
	}
	if echo != "" { // nothing was generated
		resp.Choices = []completionChoice{{Text: echo}}
		if sse.data(resp) != nil {
			return
		}
	}
	resp.Choices = []completionChoice{{FinishReason: &res.finish}}
	resp.Timings = res.timings()
	if sse.data(resp) != nil {
		return
	}
	if includeUsage {
		resp.Choices = []completionChoice{}
		resp.Usage = res.usage(g.promptN)
		if sse.data(resp) != nil {
			return
		}
	}
	sse.done()
}

type tokenizeRequest struct {
	Content      string `json:"content"`
	AddSpecial   bool   `json:"add_special"`
	ParseSpecial *bool  `json:"parse_special"`
	WithPieces   bool   `json:"with_pieces"`
}

type tokenPiece struct {
	ID    int    `json:"id"`
	Piece string `json:"piece"`
}

// tokenize is llama-server's POST /tokenize.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req tokenizeRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	parse := req.ParseSpecial == nil || *req.ParseSpecial
	ids := b.Engine.Tok.Encode(req.Content, tokenizer.EncodeOptions{AddBOS: req.AddSpecial, ParseSpecial: parse})
	if ids == nil {
		ids = []int{} // "tokens": [], not null
	}
	if !req.WithPieces {
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
		return
	}
	pieces := make([]tokenPiece, len(ids))
	for i, id := range ids {
		pieces[i] = tokenPiece{id, b.Engine.Tok.Token(id)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": pieces})
}

// detokenize is llama-server's POST /detokenize.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	for i, id := range req.Tokens {
		if id < 0 || id >= b.Engine.Tok.VocabSize() {
			writeError(w, badRequest(fmt.Sprintf("tokens[%d]", i), "token id %d is outside the vocabulary [0,%d)", id, b.Engine.Tok.VocabSize()))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"content": b.Engine.Tok.Decode(req.Tokens)})
}
