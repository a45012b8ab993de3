package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Sentinel errors of the scheduler; handlers map them to HTTP statuses.
var (
	// ErrBusy is returned when every slot is busy and the queue is full.
	ErrBusy = errors.New("server: all slots busy and the queue is full")
	// ErrShutdown is returned for work submitted or cut off by Shutdown.
	ErrShutdown = errors.New("server: shutting down")
	// ErrKVBudget ends a job whose cache could not grow: the shared KV
	// budget (--kv-budget) is held by the other running jobs.
	ErrKVBudget = errors.New("server: the KV cache budget is exhausted")
	// ErrNoBackend is returned by Load (and New) for a Backend without an
	// engine, model or tokenizer.
	ErrNoBackend = errors.New("server: no backend")
)

// APIError is an error in the shape OpenAI clients parse:
// {"error":{"message","type","param","code"}}, sent with Status.
type APIError struct {
	Status  int    // HTTP status
	Message string // human-readable
	Type    string // "invalid_request_error", "authentication_error", ...
	Param   string // the request field at fault, if any
	Code    string // machine-readable detail, if any
}

// Error formats the error for logs.
func (e *APIError) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s (param %s): %s", e.Type, e.Param, e.Message)
	}
	return e.Type + ": " + e.Message
}

// MarshalJSON writes the OpenAI error envelope; empty param and code are
// null, as OpenAI sends them.
func (e *APIError) MarshalJSON() ([]byte, error) {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	return json.Marshal(struct {
		Error body `json:"error"`
	}{body{e.Message, e.Type, null(e.Param), null(e.Code)}})
}

// badRequest returns a 400 invalid_request_error about param.
func badRequest(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

// errorStyle is the error envelope of an API: each client library parses
// only its own.
type errorStyle uint8

const (
	styleOpenAI    errorStyle = iota // {"error":{"message","type","param","code"}}
	styleAnthropic                   // {"type":"error","error":{"type","message"}}
	styleOllama                      // {"error":"message"}
)

// styleOf is the error style of the endpoint at path, so that errors
// raised before a handler runs (authentication, routing, loading) come in
// the shape its clients parse.
func styleOf(path string) errorStyle {
	switch {
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/"):
		return styleAnthropic
	case strings.HasPrefix(path, "/api/"):
		return styleOllama
	}
	return styleOpenAI
}

// anthropicType maps an error type to Anthropic's names.
func (e *APIError) anthropicType() string {
	switch {
	case e.Status == http.StatusNotFound:
		return "not_found_error"
	case e.Status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case e.Status == http.StatusServiceUnavailable:
		return "overloaded_error"
	case e.Status == http.StatusUnauthorized:
		return "authentication_error"
	case e.Status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// styled returns the body of e in style.
func (e *APIError) styled(style errorStyle) any {
	switch style {
	case styleAnthropic:
		type body struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		return struct {
			Type  string `json:"type"`
			Error body   `json:"error"`
		}{"error", body{e.anthropicType(), e.Message}}
	case styleOllama:
		return map[string]string{"error": e.Message}
	}
	return e
}

// asAPIError returns err as an *APIError; others become 500 server_error.
func asAPIError(err error) *APIError {
	var ae *APIError
	if !errors.As(err, &ae) {
		ae = &APIError{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
	}
	return ae
}

// writeError sends err as an error object in the style of the endpoint
// (set by the middleware; OpenAI's otherwise). Errors that are not
// *APIError become 500 server_error.
func writeError(w http.ResponseWriter, err error) {
	ae := asAPIError(err)
	style := styleOpenAI
	if sw, ok := w.(*statusWriter); ok {
		style = sw.style
	}
	if ae.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(1))
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="trit"`)
	}
	writeJSON(w, ae.Status, ae.styled(style))
}

// writeJSON sends v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
