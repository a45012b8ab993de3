package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
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

// writeError sends err as an OpenAI error object. Errors that are not
// *APIError become 500 server_error.
func writeError(w http.ResponseWriter, err error) {
	var ae *APIError
	if !errors.As(err, &ae) {
		ae = &APIError{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
	}
	if ae.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(1))
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="trit"`)
	}
	writeJSON(w, ae.Status, ae)
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
