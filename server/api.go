package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"trit/chat"
	"trit/grammar"
	"trit/sample"
	"trit/vision"
)

// Limits on request contents, so that a hostile request cannot make the
// server allocate or loop without bound.
const (
	maxStops       = 16
	maxStopLen     = 1024
	maxMessages    = 4096
	maxContentPart = 4096
	maxTools       = 256
	bodyTimeout    = 60 * time.Second
)

// samplingFields are the generation fields shared by the chat and the
// legacy completion requests. Pointers tell "absent" from zero.
type samplingFields struct {
	MaxTokens           *int         `json:"max_tokens"`
	MaxCompletionTokens *int         `json:"max_completion_tokens"`
	Stop                stopList     `json:"stop"`
	Temperature         *float64     `json:"temperature"`
	TopP                *float64     `json:"top_p"`
	TopK                *int         `json:"top_k"`
	MinP                *float64     `json:"min_p"`
	Seed                *json.Number `json:"seed"`
	PresencePenalty     *float64     `json:"presence_penalty"`
	FrequencyPenalty    *float64     `json:"frequency_penalty"`
	RepeatPenalty       *float64     `json:"repeat_penalty"`
	N                   *int         `json:"n"`
	Stream              bool         `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
}

// chatRequest is the body of POST /v1/chat/completions. Fields it does not
// name are ignored, as OpenAI-compatible servers do.
type chatRequest struct {
	Model    string       `json:"model"`
	Messages []reqMessage `json:"messages"`
	samplingFields
	Tools              []json.RawMessage          `json:"tools"`
	ToolChoice         json.RawMessage            `json:"tool_choice"`
	ParallelToolCalls  *bool                      `json:"parallel_tool_calls"`
	ResponseFormat     *responseFormat            `json:"response_format"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
	Logprobs           *bool                      `json:"logprobs"`
	TopLogprobs        *int                       `json:"top_logprobs"`
	grammarFields
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
	Schema json.RawMessage `json:"schema"` // llama-server: json_object with a schema
}

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	Model  string          `json:"model"`
	Prompt json.RawMessage `json:"prompt"`
	samplingFields
	Logprobs *int `json:"logprobs"`
	Echo     bool `json:"echo"`
	grammarFields
}

// reqMessage is one chat message as clients send it.
type reqMessage struct {
	Role             string        `json:"role"`
	Content          content       `json:"content"`
	ReasoningContent string        `json:"reasoning_content"`
	Name             string        `json:"name"`
	ToolCallID       string        `json:"tool_call_id"`
	ToolCalls        []reqToolCall `json:"tool_calls"`
}

// reqToolCall is a tool call in an assistant message of the history.
// Arguments is a JSON string per OpenAI; an object is accepted too.
type reqToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// jsonText decodes b, trimmed, if it is a JSON string or null (as "");
// ok is false for other values.
func jsonText(b []byte) (s string, ok bool, err error) {
	switch {
	case string(b) == "null":
		return "", true, nil
	case len(b) > 0 && b[0] == '"':
		err = json.Unmarshal(b, &s)
		return s, true, err
	}
	return "", false, nil
}

// content is message content: a string, null, or an array of text and
// image parts. Each image part stands in text as a vision.Marker, and its
// URL is kept in images, in order.
type content struct {
	text   string
	images []string
}

func (c *content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if s, ok, err := jsonText(b); ok {
		*c = content{text: s}
		return err
	}
	if len(b) == 0 || b[0] != '[' {
		return fieldErr("content", "content must be a string or an array of content parts")
	}
	var parts []struct {
		Type     string  `json:"type"`
		Text     *string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fieldErr("content", "content parts must be objects with a type and text or image_url")
	}
	if len(parts) > maxContentPart {
		return fieldErr("content", "more than %d content parts", maxContentPart)
	}
	texts := make([]string, 0, len(parts))
	var images []string
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text": // output_text: Responses history
			if p.Text == nil {
				return fieldErr("content", "text content part without text")
			}
			// A marker typed by the user is text, not an image.
			texts = append(texts, strings.ReplaceAll(*p.Text, vision.Marker, ""))
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return fieldErr("content", "image_url content part without image_url.url")
			}
			texts = append(texts, vision.Marker)
			images = append(images, p.ImageURL.URL)
		default:
			return fieldErr("content", "content part type %q is not supported (text and image_url)", p.Type)
		}
	}
	*c = content{text: strings.Join(texts, "\n"), images: images}
	return nil
}

// stopList is "stop": a string, an array of strings, or null.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var list []string
	switch {
	case string(b) == "null":
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		list = []string{one}
	default:
		if err := json.Unmarshal(b, &list); err != nil {
			return fieldErr("stop", "stop must be a string or an array of strings")
		}
	}
	if len(list) > maxStops {
		return fieldErr("stop", "at most %d stop strings", maxStops)
	}
	out := list[:0]
	for _, x := range list {
		if len(x) > maxStopLen {
			return fieldErr("stop", "stop string longer than %d bytes", maxStopLen)
		}
		if x != "" {
			out = append(out, x)
		}
	}
	*s = out
	return nil
}

// fieldError is a decoding error that names the field at fault.
type fieldError struct {
	param, msg string
}

func (e *fieldError) Error() string { return e.msg }

func fieldErr(param, format string, args ...any) error {
	return &fieldError{param, fmt.Sprintf(format, args...)}
}

// decodeBody reads a JSON request body of at most limit bytes into v and
// maps every failure to a 4xx APIError.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	// A deadline for the body alone: a client trickling bytes cannot hold
	// a handler forever, while the response (a long stream) has no limit.
	// Writers without deadlines (tests' recorders) just skip it.
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(bodyTimeout)) == nil {
		defer rc.SetReadDeadline(time.Time{})
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
				Code: "request_too_large", Message: fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
		}
		return badRequest("", "reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "empty request body: expected a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		var fe *fieldError
		switch {
		case errors.As(err, &se):
			return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json",
				Message: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)}
		case errors.As(err, &te):
			if te.Field == "" {
				return badRequest("", "the request body must be a JSON object, not %s", te.Value)
			}
			// The path names embedded structs; clients know only the JSON keys.
			field := strings.TrimPrefix(te.Field, "samplingFields.")
			return badRequest(field, "field %q must be %s, not %s", field, jsonKind(te.Type.Kind().String()), te.Value)
		case errors.As(err, &fe):
			return badRequest(fe.param, "%s", fe.msg)
		}
		return badRequest("", "invalid JSON: %v", err)
	}
	return nil
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case k == "slice" || k == "array":
		return "an array"
	case k == "struct" || k == "map":
		return "an object"
	}
	return "of another type"
}

// genParams are the validated generation settings of one request.
type genParams struct {
	maxTokens int // most tokens to generate; always >= 1
	sample    sample.Params
	stop      []string
	ignoreEOG bool
	grammar   *grammar.Grammar // constrain the output to this grammar
	gopts     grammar.Options
	// logprobs asks for the log-probability of each generated token and
	// its topLogprobs most likely alternatives; promptLogprobs for those of
	// the prompt tokens too.
	logprobs       bool
	topLogprobs    int
	promptLogprobs bool
}

// params validates the sampling fields against a context of ctx tokens.
// defMax is the token limit when the request gives none.
// defaults are the sampler settings a request starts from.
func (f *samplingFields) params(ctx, defMax int, defaults sample.Params, seed func() uint64) (genParams, error) {
	g := genParams{maxTokens: defMax, sample: defaults, stop: f.Stop, ignoreEOG: f.IgnoreEOS}
	if f.N != nil && *f.N != 1 {
		return g, badRequest("n", "only n=1 is supported")
	}
	for _, m := range []struct {
		name string
		v    *int
	}{{"max_tokens", f.MaxTokens}, {"max_completion_tokens", f.MaxCompletionTokens}} {
		if m.v == nil {
			continue
		}
		if *m.v < 1 || *m.v > ctx {
			return g, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: m.name, Code: "invalid_value",
				Message: fmt.Sprintf("%s is %d; it must be between 1 and the context size %d", m.name, *m.v, ctx)}
		}
		g.maxTokens = *m.v // max_completion_tokens, checked second, wins
	}
	type rng struct {
		name     string
		v        *float64
		dst      *float32
		min, max float64
	}
	for _, x := range []rng{
		{"temperature", f.Temperature, &g.sample.Temperature, 0, 100},
		{"top_p", f.TopP, &g.sample.TopP, 0, 1},
		{"min_p", f.MinP, &g.sample.MinP, 0, 1},
		{"presence_penalty", f.PresencePenalty, &g.sample.PresencePenalty, -2, 2},
		{"frequency_penalty", f.FrequencyPenalty, &g.sample.FrequencyPenalty, -2, 2},
		{"repeat_penalty", f.RepeatPenalty, &g.sample.RepeatPenalty, 0, 100},
	} {
		if x.v == nil {
			continue
		}
		if math.IsNaN(*x.v) || *x.v < x.min || *x.v > x.max {
			return g, badRequest(x.name, "%s is %g; it must be between %g and %g", x.name, *x.v, x.min, x.max)
		}
		*x.dst = float32(*x.v)
	}
	if f.TopK != nil {
		if *f.TopK < 0 {
			return g, badRequest("top_k", "top_k is %d; it must be 0 (off) or more", *f.TopK)
		}
		g.sample.TopK = *f.TopK
	}
	g.sample.Seed = seed()
	if f.Seed != nil {
		s := string(*f.Seed)
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			g.sample.Seed = u
		} else if i, err := strconv.ParseInt(s, 10, 64); err != nil || i != -1 {
			// -1 is llama.cpp's "random seed"; anything else must be an integer.
			return g, badRequest("seed", "seed %s is not a 64-bit integer", s)
		}
	}
	return g, nil
}

// toChat converts the request's messages for the template.
func toChat(in []reqMessage) ([]chat.Message, error) {
	if len(in) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty array")
	}
	if len(in) > maxMessages {
		return nil, badRequest("messages", "more than %d messages", maxMessages)
	}
	out := make([]chat.Message, len(in))
	for i, m := range in {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "unknown role %q", m.Role)
		}
		role := m.Role
		if role == "developer" {
			role = "system" // OpenAI's newer name for the system role
		}
		text := m.Content.text
		if len(m.Content.images) == 0 {
			text = strings.ReplaceAll(text, vision.Marker, "") // only image parts make markers
		}
		cm := chat.Message{Role: role, Content: text, ReasoningContent: m.ReasoningContent,
			ToolCallID: m.ToolCallID, Name: m.Name}
		for j, tc := range m.ToolCalls {
			args := string(bytes.TrimSpace(tc.Function.Arguments))
			if strings.HasPrefix(args, `"`) {
				if err := json.Unmarshal(tc.Function.Arguments, &args); err != nil {
					return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j), "bad arguments string")
				}
			}
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: tc.ID, Type: "function",
				Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: args}})
		}
		out[i] = cm
	}
	return out, nil
}
