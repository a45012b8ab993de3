// Package server is trit's HTTP server: OpenAI's chat and legacy
// completions and (stateless) Responses, Anthropic's Messages and Ollama's
// chat, generate and model endpoints, streamed or not, plus models,
// health, Prometheus metrics and tokenization, for clients such as the
// official SDKs, coding agents, Open WebUI and benchmark tools. Every API
// translates its request into one request model (genRequest) and frames
// the same split output (reasoning, content, tool calls) its own way.
//
// Generation runs in slots, one model state each. A single scheduler
// goroutine owns the model and batches the work of every busy slot into
// one Forward call per step (continuous batching): a request joins or
// leaves between steps, and long prompts are prefilled in chunks next to
// the other slots' decoding steps. Requests beyond the slots wait in a
// bounded queue; beyond that the server answers 503 with Retry-After.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"trit/chat"
	"trit/engine"
	"trit/model/kvcache"
	"trit/vision"
)

// Config controls a Server. The zero value of every field but Backend has
// a usable default.
type Config struct {
	// Addr is where Run listens (default "127.0.0.1:8080").
	Addr string
	// Backend is the model to serve. When nil the server answers 503
	// ("loading") until Load is called.
	Backend *Backend
	// Parallel is the number of slots generating together (default 1).
	Parallel int
	// Context is the context size of each slot in tokens (default and
	// upper bound: the model's trained context).
	Context int
	// Queue is how many requests may wait for a slot (default 64).
	Queue int
	// APIKey, when set, is required as "Authorization: Bearer <key>" (or
	// "X-Api-Key: <key>") on every endpoint but /health.
	APIKey string
	// MaxBodyBytes bounds request bodies (default 8 MiB).
	MaxBodyBytes int64
	// DrainTimeout bounds how long Run waits for requests in flight when
	// its context ends (default 30 s).
	DrainTimeout time.Duration
	// Logger receives request and lifecycle logs (default slog.Default()).
	Logger *slog.Logger
	// Images configures image input.
	Images Images
}

// Backend is a loaded model with what serving it needs.
type Backend struct {
	Engine *engine.Engine
	// Template renders chat messages into a prompt (nil: ChatML).
	Template *chat.Template
	// ModelID is the name /v1/models reports (default "trit").
	ModelID string
	// KVBudget, if set, is the budget the model's caches draw from
	// (model.Options.KVBudget); /metrics reports it.
	KVBudget *kvcache.Budget
	// Vision is the image tower (nil: image requests get a 400).
	Vision *vision.Lazy
}

// Server serves the APIs. Create it with New.
type Server struct {
	cfg     Config
	log     *slog.Logger
	m       *metrics
	handler http.Handler
	created int64

	mu      sync.Mutex
	ready   atomic.Pointer[loadedBackend]
	httpSrv *http.Server
	stopped bool

	draining atomic.Bool
}

// loadedBackend is a Backend with its scheduler running.
type loadedBackend struct {
	*Backend
	sc  *sched
	ctx int // tokens per slot
}

// New returns a Server for cfg. If cfg.Backend is set, its scheduler is
// started; stop it with Shutdown.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Images.defaults()
	s := &Server{cfg: cfg, log: cfg.Logger, m: newMetrics(), created: time.Now().Unix()}
	s.handler = s.routes()
	if cfg.Backend != nil {
		if err := s.Load(cfg.Backend); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Load makes b the served model and starts its scheduler; until then the
// API answers 503. It may be called once.
func (s *Server) Load(b *Backend) error {
	if b == nil || b.Engine == nil || b.Engine.Model == nil || b.Engine.Tok == nil {
		return ErrNoBackend
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrShutdown
	}
	if s.ready.Load() != nil {
		return errors.New("server: a backend is already loaded")
	}
	bb := *b
	if bb.Template == nil {
		bb.Template = chat.ChatML()
	}
	if bb.ModelID == "" {
		bb.ModelID = "trit"
	}
	if bb.Vision != nil {
		s.m.mu.Lock()
		s.m.towerBytes = bb.Vision.Resident
		s.m.mu.Unlock()
	}
	ctx := s.cfg.Context
	if train := bb.Engine.Model.Info().ContextLen; ctx <= 0 || (train > 0 && ctx > train) {
		ctx = train
	}
	if ctx <= 0 {
		ctx = 4096
	}
	if bb.KVBudget != nil {
		s.m.kvLimit.Store(bb.KVBudget.Limit())
	}
	sc, err := newSched(bb.Engine, s.cfg.Parallel, ctx, s.cfg.Queue, s.m)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	go sc.run()
	s.ready.Store(&loadedBackend{Backend: &bb, sc: sc, ctx: ctx})
	s.log.Info("model ready", "model", bb.ModelID, "slots", s.cfg.Parallel, "ctx_per_slot", ctx)
	return nil
}

// Handler returns the HTTP handler of the API, for use with any
// http.Server or httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve accepts connections on ln until Shutdown; it returns nil after a
// graceful shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		ln.Close()
		return ErrShutdown
	}
	if s.httpSrv == nil {
		s.httpSrv = &http.Server{
			Handler:           s.handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		}
	}
	srv := s.httpSrv
	s.mu.Unlock()
	s.log.Info("listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Run listens on the configured address and serves until ctx ends, then
// shuts down gracefully, waiting at most DrainTimeout for requests in
// flight.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		s.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "drain_timeout", s.cfg.DrainTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	err = s.Shutdown(sctx)
	if serr := <-errc; err == nil {
		err = serr
	}
	return err
}

// Shutdown stops accepting requests, waits until those in flight finish or
// ctx ends, then cancels any generation still running and stops the
// scheduler. It returns ctx's error if it had to cut requests off.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	srv := s.httpSrv
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
	} else {
		err = s.waitIdle(ctx)
	}
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	if b := s.ready.Load(); b != nil {
		b.sc.stop() // ends what is left with ErrShutdown
	}
	if err != nil && srv != nil {
		srv.Close()
	}
	return err
}

// waitIdle waits until no request is in flight.
func (s *Server) waitIdle(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for s.m.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// routes builds the mux and its middleware.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	gen := func(h func(http.ResponseWriter, *http.Request, *loadedBackend)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b := s.ready.Load()
			switch {
			case b == nil:
				writeError(w, errLoading)
			case s.draining.Load():
				writeError(w, &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "shutting_down", Message: "the server is shutting down"})
			default:
				h(w, r, b)
			}
		}
	}
	for _, p := range []string{"/health", "/v1/health"} {
		mux.HandleFunc("GET "+p, s.health)
	}
	mux.HandleFunc("GET /metrics", s.metrics)
	for _, p := range []string{"/v1/models", "/models"} {
		mux.HandleFunc("GET "+p, gen(s.listModels))
		mux.HandleFunc("GET "+p+"/{id...}", gen(s.getModel))
	}
	post := map[string]func(http.ResponseWriter, *http.Request, *loadedBackend){
		"/v1/chat/completions":      s.chatCompletions,
		"/chat/completions":         s.chatCompletions,
		"/v1/completions":           s.completions,
		"/completions":              s.completions,
		"/tokenize":                 s.tokenize,
		"/detokenize":               s.detokenize,
		"/v1/messages":              s.anthropicMessages,
		"/v1/messages/count_tokens": s.anthropicCountTokens,
		"/v1/responses":             s.responses,
		"/api/chat":                 s.ollamaChat,
		"/api/generate":             s.ollamaGenerate,
		"/api/show":                 s.ollamaShow,
	}
	for p, h := range post {
		mux.HandleFunc("POST "+p, gen(h))
		mux.HandleFunc(p, methodNotAllowed("POST"))
	}
	mux.HandleFunc("GET /api/tags", gen(s.ollamaTags))
	mux.HandleFunc("GET /api/ps", gen(s.ollamaPS))
	mux.HandleFunc("GET /api/version", s.ollamaVersion)
	// Ollama clients probe the root for "Ollama is running".
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "Ollama is running")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found",
			Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
	})
	return s.middleware(mux)
}

var errLoading = &APIError{Status: http.StatusServiceUnavailable, Type: "unavailable_error", Code: "loading", Message: "Loading model"}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, &APIError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
			Message: fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, allow)})
	}
}

// statusWriter records the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	style  errorStyle // the error envelope of the endpoint
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware: panic recovery, path cleaning (clients send /v1//models),
// CORS, authentication, in-flight counting and request logs.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		s.m.inFlight.Add(1)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			s.m.inFlight.Add(-1)
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, fmt.Errorf("internal error"))
				}
			}
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"ms", time.Since(t0).Milliseconds(), "remote", r.RemoteAddr)
		}()
		if strings.Contains(r.URL.Path, "//") {
			r2 := *r
			u := *r.URL
			for strings.Contains(u.Path, "//") {
				u.Path = strings.ReplaceAll(u.Path, "//", "/")
			}
			u.RawPath = ""
			r2.URL = &u
			r = &r2
		}
		sw.style = styleOf(r.URL.Path)
		// Browser clients (web UIs) need CORS; preflights carry no key.
		if r.Header.Get("Origin") != "" {
			h := sw.Header()
			h.Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key, Anthropic-Version, Anthropic-Beta")
				h.Set("Access-Control-Max-Age", "600")
				sw.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if s.cfg.APIKey != "" && r.URL.Path != "/health" && r.URL.Path != "/v1/health" && !s.authorized(r) {
			writeError(sw, &APIError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key",
				Message: "missing or wrong API key: send Authorization: Bearer <key> or X-Api-Key: <key>"})
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// authorized accepts the key as a bearer token or, as Anthropic's clients
// send it, in X-Api-Key.
func (s *Server) authorized(r *http.Request) bool {
	key := r.Header.Get("X-Api-Key")
	if h := r.Header.Get("Authorization"); key == "" || h != "" {
		const prefix = "Bearer "
		if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
			return false
		}
		key = strings.TrimSpace(h[len(prefix):])
	}
	return subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.APIKey)) == 1
}
