package server

import (
	"math"

	"trit/logprob"
	"trit/tokenizer"
)

// Log-probabilities, as OpenAI's APIs return them. They are those of the
// model's distribution (log-softmax of the raw logits) before any sampling
// step changes it: no penalties, temperature, top-k/top-p/min-p or JSON
// mask. A request that asks for none pays nothing: the scheduler only looks
// at logits for jobs whose logprobs field is set.

// maxTopLogprobs bounds top_logprobs and the completions' logprobs (OpenAI
// allows 20 and 5).
const maxTopLogprobs = 20

// maxPromptLogprobRows is the most prompt tokens per forward pass of a job
// that wants the prompt's logprobs: each needs a row of logits.
const maxPromptLogprobRows = 64

// tokenLogprob is one token's entry: its log-probability and the most
// likely tokens at its position. none marks the first prompt token, which
// no position predicts.
type tokenLogprob struct {
	id      int
	logprob float32
	top     []logprob.Token
	none    bool
}

// newLogprob computes the entry of token id from the logits that predicted
// it, with the n most likely tokens.
func newLogprob(logits []float32, id, n int) tokenLogprob {
	lse := logprob.LogSumExp(logits)
	e := tokenLogprob{id: id, logprob: logprob.Of(logits[id], lse)}
	if n > 0 {
		e.top = logprob.Top(nil, logits, n, lse)
	}
	return e
}

// addLogprobs queues entries for the handler.
func (j *job) addLogprobs(e ...tokenLogprob) {
	j.mu.Lock()
	j.lps = append(j.lps, e...)
	j.mu.Unlock()
}

// takeLogprobs returns the entries produced since the last call.
func (j *job) takeLogprobs() []tokenLogprob {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.lps
	j.lps = nil
	return e
}

// tokenText is the text of one token as logprobs show it: its decoded
// bytes, or its name for a control token (which decodes to nothing).
func tokenText(tok *tokenizer.Tokenizer, id int) string {
	if tok.IsControl(id) {
		return tok.Token(id)
	}
	return tok.Decode([]int{id})
}

// finite keeps JSON encodable: a −Inf log-probability (a token of
// probability 0) is reported as the most negative float32, as OpenAI-style
// servers do.
func finite(v float32) float64 {
	if math.IsInf(float64(v), -1) {
		return -math.MaxFloat32
	}
	return float64(v)
}

// Chat shapes: choices[].logprobs = {"content": [...], "refusal": null}.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
	Refusal []chatTokenLogprob `json:"refusal"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type chatTokenLogprob struct {
	chatTopLogprob
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

func byteList(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}

func chatEntry(tok *tokenizer.Tokenizer, id int, lp float32) chatTopLogprob {
	s := tokenText(tok, id)
	return chatTopLogprob{Token: s, Logprob: finite(lp), Bytes: byteList(s)}
}

// toChatLogprobs converts entries; nil when there are none.
func toChatLogprobs(tok *tokenizer.Tokenizer, es []tokenLogprob) *chatLogprobs {
	if len(es) == 0 {
		return nil
	}
	out := &chatLogprobs{Content: make([]chatTokenLogprob, len(es))}
	for i, e := range es {
		c := chatTokenLogprob{chatTopLogprob: chatEntry(tok, e.id, e.logprob), TopLogprobs: []chatTopLogprob{}}
		for _, t := range e.top {
			c.TopLogprobs = append(c.TopLogprobs, chatEntry(tok, t.ID, t.LogProb))
		}
		out.Content[i] = c
	}
	return out
}

// Completions shape: parallel arrays, top_logprobs as token → logprob
// maps holding the n most likely tokens plus the chosen one (as OpenAI's
// legacy API does, so "is the chosen token the top one" can be read off),
// and text_offset the byte offset of each token in the returned text.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// appendCompletion adds entries to l; offset is the byte offset of the
// first one's text, and the offset after the last is returned.
func (l *completionLogprobs) append(tok *tokenizer.Tokenizer, es []tokenLogprob, offset int) int {
	for _, e := range es {
		s := tokenText(tok, e.id)
		l.Tokens = append(l.Tokens, s)
		l.TextOffset = append(l.TextOffset, offset)
		offset += len(s)
		if e.none {
			l.TokenLogprobs = append(l.TokenLogprobs, nil)
			l.TopLogprobs = append(l.TopLogprobs, nil)
			continue
		}
		v := finite(e.logprob)
		l.TokenLogprobs = append(l.TokenLogprobs, &v)
		m := make(map[string]float64, len(e.top)+1)
		for _, t := range e.top {
			if _, dup := m[tokenText(tok, t.ID)]; !dup {
				m[tokenText(tok, t.ID)] = finite(t.LogProb)
			}
		}
		if _, ok := m[s]; !ok {
			m[s] = v
		}
		l.TopLogprobs = append(l.TopLogprobs, m)
	}
	return offset
}

// logprobParams validates the chat request's logprobs and top_logprobs.
func (r *chatRequest) logprobParams(g *genParams) error {
	g.logprobs = r.Logprobs != nil && *r.Logprobs
	if r.TopLogprobs == nil {
		return nil
	}
	n := *r.TopLogprobs
	if n < 0 || n > maxTopLogprobs {
		return badRequest("top_logprobs", "top_logprobs is %d; it must be between 0 and %d", n, maxTopLogprobs)
	}
	if !g.logprobs && n > 0 {
		return badRequest("top_logprobs", "top_logprobs needs logprobs set to true")
	}
	g.topLogprobs = n
	return nil
}

// logprobParams validates the completions request's logprobs; echo with
// logprobs asks for the prompt's too.
func (r *completionRequest) logprobParams(g *genParams) error {
	if r.Logprobs == nil {
		return nil
	}
	n := *r.Logprobs
	if n < 0 || n > maxTopLogprobs {
		return badRequest("logprobs", "logprobs is %d; it must be between 0 and %d", n, maxTopLogprobs)
	}
	g.logprobs, g.topLogprobs, g.promptLogprobs = true, n, r.Echo
	return nil
}
