package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"trit/chat"
	"trit/grammar"
	"trit/model"
)

// genRequest is a generation request in the server's own terms. Every API
// (OpenAI chat and completions, Responses, Anthropic Messages, Ollama)
// decodes its body into one, and start runs it on the scheduler; only the
// framing of the answer differs per API.
type genRequest struct {
	// messages is a conversation, rendered with the model's chat template,
	// or, when raw is set, prompt is the tokenized prompt as given.
	messages []chat.Message
	raw      bool
	prompt   []int
	// images are the image URLs of the messages, in the order of their
	// vision.Marker placeholders.
	images []string

	tools    []chat.Tool // offered to the template; output is parsed for calls
	thinking *bool       // the template's enable_thinking; nil: its default
	extra    map[string]any

	// sampling holds the generation settings under OpenAI's field names;
	// the other APIs copy theirs in.
	sampling samplingFields
	json     bool // constrain the output to a JSON object
	// con, if set, is the grammar the output follows (chat and completion
	// requests' response_format, grammar, json_schema and tool_choice).
	con *constraint

	// defaultMax is the token limit when the request sets none (0: the
	// rest of the context). clampMax caps a larger limit to the room left
	// instead of refusing it: clients written for hosted models send their
	// models' limits.
	defaultMax int
	clampMax   bool
	// ctx lowers the context for this request (0: the slot's).
	ctx int
	// adjust sets what one API asks beyond the sampling fields (logprobs).
	adjust func(*genParams) error
	// promptParam names the request field holding the prompt, for errors;
	// maxParam the token limit's, where it is not max_tokens.
	promptParam, maxParam string
}

// encoded is a request rendered and tokenized.
type encoded struct {
	ids []int
	// in and keys are the image input and its prefix keys (nil: text).
	in   *model.Input
	keys []int
	// startThinking says the prompt ends inside an opened reasoning block.
	startThinking bool
}

// encode renders and tokenizes req.
func (s *Server) encode(r *http.Request, b *loadedBackend, req *genRequest) (encoded, error) {
	if req.raw {
		return encoded{ids: req.prompt}, nil
	}
	if req.json && req.con == nil {
		req.con = &constraint{g: grammar.JSONObject()}
	}
	thinking := req.thinking
	if req.con != nil && req.con.trigger == "" && thinking == nil {
		// The constraint applies from the first token: no room for a
		// reasoning block.
		off := false
		thinking = &off
	}
	opts := chat.Options{AddGenerationPrompt: true, EnableThinking: thinking, Tools: req.tools, Extra: req.extra}
	if eos := b.Engine.Tok.EOS(); eos >= 0 {
		opts.EOSToken = b.Engine.Tok.Token(eos)
	}
	prompt, err := b.Template.Render(req.messages, opts)
	if err != nil {
		return encoded{}, badRequest(req.promptParam, "rendering the chat template: %v", err)
	}
	ids, in, keys, err := s.promptInput(r.Context(), b, prompt, req.images, req.promptParam)
	if err != nil {
		return encoded{}, err
	}
	// A prompt ending in <think> has the model start inside its reasoning.
	start := strings.HasSuffix(strings.TrimRight(prompt, " \n"), "<think>")
	return encoded{ids: ids, in: in, keys: keys, startThinking: start}, nil
}

func (s *Server) reqCtx(b *loadedBackend, req *genRequest) int {
	if req.ctx > 0 && req.ctx < b.ctx {
		return req.ctx
	}
	return b.ctx
}

// generation is a submitted request whose output a handler reads.
type generation struct {
	j       *job
	out     *chatOutput // nil for a raw prompt: all output is content
	promptN int
	// logprobs: the deltas carry the tokens' logprobs entries.
	logprobs bool
}

// start encodes req, validates its settings and submits it to the
// scheduler.
func (s *Server) start(r *http.Request, b *loadedBackend, req *genRequest) (*generation, error) {
	enc, err := s.encode(r, b, req)
	if err != nil {
		return nil, err
	}
	ctx := s.reqCtx(b, req)
	if err := checkPrompt(enc.ids, ctx, req.promptParam); err != nil {
		return nil, err
	}
	room := max(1, ctx-len(enc.ids))
	f := req.sampling
	if req.clampMax {
		for _, m := range []**int{&f.MaxTokens, &f.MaxCompletionTokens} {
			if *m != nil && **m > room {
				*m = &room
			}
		}
	}
	def := req.defaultMax
	if def <= 0 {
		def = room
	}
	p, err := f.params(ctx, def, b.Engine.Defaults(), randomSeed)
	if ae, ok := err.(*APIError); ok && ae.Param == "max_tokens" && req.maxParam != "" {
		e := *ae
		e.Param, e.Message = req.maxParam, strings.Replace(e.Message, "max_tokens", req.maxParam, 1)
		err = &e
	}
	if err != nil {
		return nil, err
	}
	if con := req.con; con != nil {
		// The constraint starts after the reasoning, so the constrained
		// answer is the content.
		p.grammar, p.gopts = con.g, grammar.Options{Trigger: con.trigger}
		switch {
		case enc.startThinking:
			p.gopts.Reasoning = grammar.InReasoning
		case !req.raw && (req.thinking == nil && con.trigger != "" || req.thinking != nil && *req.thinking):
			p.gopts.Reasoning = grammar.MaybeReasoning
		}
	}
	if req.adjust != nil {
		if err := req.adjust(&p); err != nil {
			return nil, err
		}
	}
	j := newJob(r.Context(), enc.ids, p)
	j.in, j.keys = enc.in, enc.keys
	if err := s.submit(b, j); err != nil {
		return nil, err
	}
	g := &generation{j: j, promptN: len(enc.ids), logprobs: p.logprobs}
	if !req.raw {
		g.out = &chatOutput{rp: chat.ReasoningParser{StartInReasoning: enc.startThinking}}
		if len(req.tools) > 0 {
			g.out.tp = &chat.ToolCallParser{}
		}
	}
	return g, nil
}

// delta is a piece of a generation's output, split, with the logprobs
// entries of its tokens when asked for (they may run ahead of the text,
// which the decoder and the stop matcher can hold back).
type delta struct {
	reasoning, content string
	calls              []toolCall
	logprobs           []tokenLogprob
}

func (d *delta) empty() bool {
	return d.reasoning == "" && d.content == "" && len(d.calls) == 0 && len(d.logprobs) == 0
}

// add appends e to d; it is the fn of each for a whole answer.
func (d *delta) add(e delta) error {
	d.reasoning += e.reasoning
	d.content += e.content
	d.calls = append(d.calls, e.calls...)
	d.logprobs = append(d.logprobs, e.logprobs...)
	return nil
}

// each passes the output to fn as it comes until the generation ends, and
// returns how it ended. ok is false when the client has gone or fn failed
// (a write to a gone client); the scheduler then drops the job.
func (g *generation) each(r *http.Request, fn func(delta) error) (res result, ok bool) {
	for {
		if !wait(r, g.j) {
			return res, false
		}
		text, done, res := g.j.take()
		d := delta{content: text}
		if g.out != nil {
			d = g.out.write(text, done)
		}
		if g.logprobs {
			d.logprobs = g.j.takeLogprobs()
		}
		if !d.empty() && fn(d) != nil {
			return res, false
		}
		if done {
			return res, true
		}
	}
}

// whole passes the whole output to fn and returns how it ended. When ok
// is false the client has gone, or the generation failed and the error
// has been answered.
func (g *generation) whole(w http.ResponseWriter, r *http.Request, fn func(delta) error) (res result, ok bool) {
	res, ok = g.each(r, fn)
	if ok && res.err != nil {
		writeError(w, jobError(res.err))
		return res, false
	}
	return res, ok
}

// answer waits for the whole output, as whole.
func (g *generation) answer(w http.ResponseWriter, r *http.Request) (d delta, res result, ok bool) {
	res, ok = g.whole(w, r, d.add)
	return d, res, ok
}

// apiRequest is a request body of one of the APIs.
type apiRequest interface {
	request() (*genRequest, error)
}

// begin decodes the body into req, translates it and starts it. When it
// returns nil it has answered with the error.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, b *loadedBackend, req apiRequest) *generation {
	err := decodeBody(w, r, s.cfg.MaxBodyBytes, req)
	var gr *genRequest
	if err == nil {
		gr, err = req.request()
	}
	var g *generation
	if err == nil {
		g, err = s.start(r, b, gr)
	}
	if err != nil {
		writeError(w, err)
		return nil
	}
	return g
}

// functionTool is a tool definition in the OpenAI form the chat templates
// read, from the parts the Anthropic and Responses APIs send; a missing
// schema allows any object. param names the schema's field, for errors.
func functionTool(name, description string, schema json.RawMessage, param string) (chat.Tool, error) {
	switch s := bytes.TrimSpace(schema); {
	case len(s) == 0 || string(s) == "null":
		schema = json.RawMessage(`{"type":"object"}`)
	case s[0] != '{':
		return nil, badRequest(param, "%s must be a JSON object", param)
	}
	return json.Marshal(map[string]any{"type": "function", "function": map[string]any{
		"name": name, "description": description, "parameters": schema}})
}
