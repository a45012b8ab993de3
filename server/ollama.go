package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"trit/chat"
	"trit/tokenizer"
)

// Ollama's API: /api/tags, /api/show, /api/version, /api/ps, /api/chat
// and /api/generate, for the many clients written against it.

// ollamaVersion is the Ollama release whose API these endpoints follow;
// clients gate features on /api/version.
const ollamaVersion = "0.17.4"

// ollamaName is a model name as Ollama spells it, with a tag.
func ollamaName(id string) string {
	if i := strings.LastIndexByte(id, '/'); strings.IndexByte(id[i+1:], ':') < 0 {
		return id + ":latest"
	}
	return id
}

// ollamaModel checks that name, as an Ollama client sends it ("demo",
// "demo:latest"), is the served model.
func ollamaModel(b *loadedBackend, name string) error {
	if name == "" {
		return badRequest("model", "model is required")
	}
	if ollamaName(name) != ollamaName(b.ModelID) {
		return &APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("model %q not found, try pulling it first; this server has %q", name, ollamaName(b.ModelID))}
	}
	return nil
}

type ollamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

type ollamaModelEntry struct {
	Name          string        `json:"name"`
	Model         string        `json:"model"`
	ModifiedAt    time.Time     `json:"modified_at"`
	Size          int64         `json:"size"`
	Digest        string        `json:"digest"`
	Details       ollamaDetails `json:"details"`
	ExpiresAt     *time.Time    `json:"expires_at,omitempty"`
	SizeVRAM      *int64        `json:"size_vram,omitempty"`
	ContextLength int           `json:"context_length,omitempty"`
}

func (s *Server) ollamaEntry(b *loadedBackend) ollamaModelEntry {
	info := b.Engine.Model.Info()
	quant, most := "", int64(-1)
	for t, n := range info.Types {
		if n > most || (n == most && t < quant) {
			quant, most = t, n
		}
	}
	size := fmt.Sprintf("%.1fB", float64(info.Params)/1e9)
	if info.Params < 1e9 {
		size = fmt.Sprintf("%dM", (info.Params+500_000)/1_000_000)
	}
	// A stable name for the served model, not a file digest: trit reads
	// GGUF files, not Ollama's blobs.
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%d", b.ModelID, info.Arch, info.Params, info.WeightBytes))
	name := ollamaName(b.ModelID)
	return ollamaModelEntry{Name: name, Model: name, ModifiedAt: time.Unix(s.created, 0).UTC(), Size: info.WeightBytes,
		Digest: hex.EncodeToString(sum[:]),
		Details: ollamaDetails{Format: "gguf", Family: info.Arch, Families: []string{info.Arch},
			ParameterSize: size, QuantizationLevel: quant}}
}

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	writeJSON(w, http.StatusOK, map[string]any{"models": []ollamaModelEntry{s.ollamaEntry(b)}})
}

func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	e := s.ollamaEntry(b)
	// Loaded until the server stops; no VRAM: trit runs on the CPU.
	never := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	var vram int64
	e.ExpiresAt, e.SizeVRAM, e.ContextLength = &never, &vram, b.ctx
	writeJSON(w, http.StatusOK, map[string]any{"models": []ollamaModelEntry{e}})
}

func (s *Server) ollamaVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": ollamaVersion})
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // the older spelling
	}
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Model == "" {
		req.Model = req.Name
	}
	if err := ollamaModel(b, req.Model); err != nil {
		writeError(w, err)
		return
	}
	e := s.ollamaEntry(b)
	info := b.Engine.Model.Info()
	caps := []string{"completion"}
	src := b.Template.Source()
	if strings.Contains(src, "tools") {
		caps = append(caps, "tools")
	}
	if strings.Contains(src, "<think>") || strings.Contains(src, "enable_thinking") {
		caps = append(caps, "thinking")
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"template": src, "details": e.Details, "modified_at": e.ModifiedAt, "capabilities": caps,
		"model_info": map[string]any{
			"general.architecture": info.Arch, "general.name": info.Name, "general.parameter_count": info.Params,
			info.Arch + ".context_length": info.ContextLen, info.Arch + ".block_count": info.Layers,
			info.Arch + ".embedding_length": info.Hidden,
		},
	})
}

// ollamaOptions are the "options" trit honours; others (num_thread,
// mirostat, ...) are accepted and ignored, as Ollama ignores unknown ones.
type ollamaOptions struct {
	Temperature      *float64     `json:"temperature"`
	TopP             *float64     `json:"top_p"`
	TopK             *int         `json:"top_k"`
	MinP             *float64     `json:"min_p"`
	NumPredict       *int         `json:"num_predict"`
	NumCtx           *int         `json:"num_ctx"`
	Seed             *json.Number `json:"seed"`
	Stop             stopList     `json:"stop"`
	RepeatPenalty    *float64     `json:"repeat_penalty"`
	PresencePenalty  *float64     `json:"presence_penalty"`
	FrequencyPenalty *float64     `json:"frequency_penalty"`
}

// ollamaCommon are the fields /api/chat and /api/generate share.
type ollamaCommon struct {
	Model     string          `json:"model"`
	Stream    *bool           `json:"stream"` // default true
	Format    json.RawMessage `json:"format"`
	Options   ollamaOptions   `json:"options"`
	Think     json.RawMessage `json:"think"`
	KeepAlive json.RawMessage `json:"keep_alive"` // accepted: the model stays loaded
}

// apply copies the common settings into req.
func (c *ollamaCommon) apply(req *genRequest) error {
	o := c.Options
	req.sampling = samplingFields{Temperature: o.Temperature, TopP: o.TopP, TopK: o.TopK, MinP: o.MinP,
		Seed: o.Seed, Stop: o.Stop, RepeatPenalty: o.RepeatPenalty, PresencePenalty: o.PresencePenalty,
		FrequencyPenalty: o.FrequencyPenalty}
	req.clampMax = true // Ollama has no limit error: the context is the bound
	if n := o.NumPredict; n != nil && *n > 0 {
		// -1 (no limit) and -2 (fill the context) both mean the rest of it.
		req.sampling.MaxTokens = n
	}
	if n := o.NumCtx; n != nil {
		if *n < 1 {
			return badRequest("options.num_ctx", "num_ctx is %d; it must be positive", *n)
		}
		req.ctx = *n
	}
	switch f := bytes.TrimSpace(c.Format); {
	case len(f) == 0 || string(f) == "null" || string(f) == `""`:
	case string(f) == `"json"`:
		req.json = true
	case f[0] == '{':
		// A JSON schema: the answer is kept to a JSON object; the schema
		// itself is not enforced until structured output exists.
		req.json = true
	default:
		return badRequest("format", `format must be "json" or a JSON schema object, not %s`, f)
	}
	switch t := bytes.TrimSpace(c.Think); string(t) {
	case "", "null":
	case "true", `"high"`, `"medium"`, `"low"`:
		on := true
		req.thinking = &on
	case "false":
		off := false
		req.thinking = &off
	default:
		return badRequest("think", `think must be true, false, "high", "medium" or "low", not %s`, t)
	}
	return nil
}

// ollamaMessage is a chat message as Ollama clients send and receive it.
type ollamaMessage struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	Thinking   string            `json:"thinking,omitempty"`
	Images     []json.RawMessage `json:"images,omitempty"`
	ToolCalls  []ollamaToolCall  `json:"tool_calls,omitempty"`
	ToolName   string            `json:"tool_name,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // an object
	} `json:"function"`
}

type ollamaChatRequest struct {
	ollamaCommon
	Messages []ollamaMessage   `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

// request translates an /api/chat request.
func (c *ollamaChatRequest) request() (*genRequest, error) {
	if len(c.Messages) > maxMessages {
		return nil, badRequest("messages", "more than %d messages", maxMessages)
	}
	if len(c.Tools) > maxTools {
		return nil, badRequest("tools", "more than %d tools", maxTools)
	}
	req := &genRequest{tools: c.Tools, promptParam: "messages"}
	for i, m := range c.Messages {
		role := strings.ToLower(m.Role)
		switch role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "unknown role %q", m.Role)
		}
		if len(m.Images) > 0 {
			return nil, badRequest(fmt.Sprintf("messages[%d].images", i), "images are not supported on this endpoint: send them as image_url parts to /v1/chat/completions")
		}
		cm := chat.Message{Role: role, Content: m.Content, ReasoningContent: m.Thinking, ToolCallID: m.ToolCallID, Name: m.ToolName}
		for j, tc := range m.ToolCalls {
			args := bytes.TrimSpace(tc.Function.Arguments)
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			if args[0] != '{' {
				return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j), "arguments must be an object")
			}
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: tc.ID, Type: "function",
				Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: string(args)}})
		}
		req.messages = append(req.messages, cm)
	}
	return req, c.apply(req)
}

type ollamaGenerateRequest struct {
	ollamaCommon
	Prompt   string            `json:"prompt"`
	System   string            `json:"system"`
	Raw      bool              `json:"raw"`
	Suffix   string            `json:"suffix"`
	Template string            `json:"template"`
	Context  []int             `json:"context"`
	Images   []json.RawMessage `json:"images"`
}

// request translates an /api/generate request.
func (g *ollamaGenerateRequest) request(tok *tokenizer.Tokenizer) (*genRequest, error) {
	switch {
	case len(g.Images) > 0:
		return nil, badRequest("images", "images are not supported on this endpoint: send them as image_url parts to /v1/chat/completions")
	case g.Suffix != "":
		return nil, badRequest("suffix", "suffix (fill-in-the-middle) is not supported")
	case g.Template != "":
		return nil, badRequest("template", "template overrides are not supported: the model's chat template is used (or raw)")
	case len(g.Context) > 0:
		return nil, badRequest("context", "context (deprecated) is not supported: send the conversation to /api/chat")
	}
	req := &genRequest{promptParam: "prompt"}
	if g.Raw {
		req.raw = true
		req.prompt = tok.Encode(g.System+g.Prompt, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
	} else {
		if g.System != "" {
			req.messages = append(req.messages, chat.Message{Role: "system", Content: g.System})
		}
		req.messages = append(req.messages, chat.Message{Role: "user", Content: g.Prompt})
	}
	return req, g.apply(req)
}

// ollamaMetrics are the timing fields of a final response, in nanoseconds.
type ollamaMetrics struct {
	TotalDuration      int64 `json:"total_duration"`
	LoadDuration       int64 `json:"load_duration"`
	PromptEvalCount    int   `json:"prompt_eval_count"`
	PromptEvalDuration int64 `json:"prompt_eval_duration"`
	EvalCount          int   `json:"eval_count"`
	EvalDuration       int64 `json:"eval_duration"`
}

// ollamaReply is a chat or generate response object: a stream's line or
// the whole answer.
type ollamaReply struct {
	Model      string         `json:"model"`
	CreatedAt  time.Time      `json:"created_at"`
	Message    *ollamaMessage `json:"message,omitempty"`  // chat
	Response   *string        `json:"response,omitempty"` // generate
	Thinking   string         `json:"thinking,omitempty"` // generate
	Done       bool           `json:"done"`
	DoneReason string         `json:"done_reason,omitempty"`
	*ollamaMetrics
}

// ollamaCall is one chat or generate request being answered.
type ollamaCall struct {
	chat  bool
	model string
	t0    time.Time
}

func (c *ollamaCall) reply(d delta) ollamaReply {
	o := ollamaReply{Model: c.model, CreatedAt: time.Now().UTC()}
	if !c.chat {
		o.Response, o.Thinking = &d.content, d.reasoning
		return o
	}
	m := &ollamaMessage{Role: "assistant", Content: d.content, Thinking: d.reasoning}
	for _, tc := range d.calls {
		var oc ollamaToolCall
		oc.ID, oc.Function.Index, oc.Function.Name = tc.ID, tc.Index, tc.Function.Name
		oc.Function.Arguments = argsObject(tc.Function.Arguments)
		m.ToolCalls = append(m.ToolCalls, oc)
	}
	o.Message = m
	return o
}

// final is the last object, with how the generation ended and its timings.
func (c *ollamaCall) final(d delta, res result, promptN int) ollamaReply {
	o := c.reply(d)
	o.Done, o.DoneReason = true, res.finish
	o.ollamaMetrics = &ollamaMetrics{TotalDuration: time.Since(c.t0).Nanoseconds(), PromptEvalCount: promptN,
		PromptEvalDuration: res.promptTime.Nanoseconds(), EvalCount: res.predictedN, EvalDuration: res.predictTime.Nanoseconds()}
	return o
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	t0 := time.Now()
	var req ollamaChatRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	gr, err := req.request()
	if err == nil {
		err = ollamaModel(b, req.Model)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	c := &ollamaCall{chat: true, model: req.Model, t0: t0}
	if len(gr.messages) == 0 {
		c.load(w, req.ollamaCommon)
		return
	}
	s.ollamaRun(w, r, b, c, gr, req.Stream)
}

func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request, b *loadedBackend) {
	t0 := time.Now()
	var req ollamaGenerateRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	gr, err := req.request(b.Engine.Tok)
	if err == nil {
		err = ollamaModel(b, req.Model)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	c := &ollamaCall{model: req.Model, t0: t0}
	if req.Prompt == "" && req.System == "" {
		c.load(w, req.ollamaCommon)
		return
	}
	s.ollamaRun(w, r, b, c, gr, req.Stream)
}

// load answers a request without a prompt, which Ollama clients send to
// load (or, with keep_alive 0, unload) the model: it is always loaded.
func (c *ollamaCall) load(w http.ResponseWriter, req ollamaCommon) {
	o := c.reply(delta{})
	o.Done, o.DoneReason = true, "load"
	if ka := string(bytes.TrimSpace(req.KeepAlive)); ka == "0" || ka == `"0"` || ka == `"0s"` {
		o.DoneReason = "unload"
	}
	writeJSON(w, http.StatusOK, o)
}

// ollamaRun generates and answers as one object or, by default, as a
// stream of newline-delimited JSON objects.
func (s *Server) ollamaRun(w http.ResponseWriter, r *http.Request, b *loadedBackend, c *ollamaCall, gr *genRequest, stream *bool) {
	g, err := s.start(r, b, gr)
	if err != nil {
		writeError(w, err)
		return
	}
	if stream != nil && !*stream {
		d, res, ok := g.answer(w, r)
		if !ok {
			return
		}
		writeJSON(w, http.StatusOK, c.final(d, res, g.promptN))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	line := func(v any) error {
		bs, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(bs, '\n')); err != nil {
			return err
		}
		return rc.Flush()
	}
	res, ok := g.each(r, func(d delta) error { return line(c.reply(d)) })
	if !ok {
		return
	}
	if res.err != nil {
		line(asAPIError(jobError(res.err)).styled(styleOllama))
		return
	}
	line(c.final(delta{}, res, g.promptN))
}
