package server

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"trit/engine"
	"trit/internal/logitcmp"
	"trit/model"
	"trit/quant"
	"trit/tokenizer"
)

// exactEngine is the demo model on the exact path (float activations), so
// that the server's batching (prefill in chunks, one-row decode steps)
// changes its logits by float rounding only, far below the 1e-4 checked.
func exactEngine(t testing.TB) *engine.Engine {
	return demoEngineWith(t, model.Options{Threads: 2, Exact: true, CacheK: quant.F32, CacheV: quant.F32})
}

// refLogprobs returns log-softmax of the logits `trit logits` computes for
// ids (one batch): row i is the distribution of the token after ids[i].
func refLogprobs(t *testing.T, eng *engine.Engine, ids []int) [][]float64 {
	t.Helper()
	d, err := model.ComputeLogits(eng.Model, ids, "batch")
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(ids))
	for i, row := range d.Logits {
		out[i] = logitcmp.LogSoftmax(row)
	}
	return out
}

// topValues returns the n largest values of lp, largest first.
func topValues(lp []float64, n int) []float64 {
	v := slices.Clone(lp)
	slices.SortFunc(v, func(a, b float64) int { return -cmpFloat(a, b) })
	return v[:n]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

const lpTol = 1e-4

// checkChatLogprobs checks the entries of a greedy chat answer: each
// token's log-probability is the reference's for the generated id, its
// top_logprobs are the reference's top values, sorted, and the chosen
// token is the first of them.
func checkChatLogprobs(t *testing.T, tok *tokenizer.Tokenizer, content []openai.ChatCompletionTokenLogprob, ref [][]float64, prompt, gen []int, top int) {
	t.Helper()
	if len(content) != len(gen) {
		t.Fatalf("%d logprobs entries for %d generated tokens", len(content), len(gen))
	}
	for i, e := range content {
		row := ref[len(prompt)-1+i]
		if e.Token != tokenText(tok, gen[i]) || string(bytesOf(e.Bytes)) != e.Token {
			t.Errorf("entry %d: token %q bytes %v, want %q", i, e.Token, e.Bytes, tokenText(tok, gen[i]))
		}
		if d := math.Abs(e.Logprob - row[gen[i]]); d > lpTol {
			t.Errorf("entry %d: logprob %.6f, log-softmax of trit logits %.6f", i, e.Logprob, row[gen[i]])
		}
		if len(e.TopLogprobs) != top {
			t.Fatalf("entry %d: %d top_logprobs, want %d", i, len(e.TopLogprobs), top)
		}
		want := topValues(row, top)
		for k, tl := range e.TopLogprobs {
			if k > 0 && tl.Logprob > e.TopLogprobs[k-1].Logprob {
				t.Errorf("entry %d: top_logprobs not sorted: %v", i, e.TopLogprobs)
			}
			if math.Abs(tl.Logprob-want[k]) > lpTol {
				t.Errorf("entry %d: top %d logprob %.6f, reference %.6f", i, k, tl.Logprob, want[k])
			}
		}
		// Greedy: the chosen token is the most likely one.
		if top > 0 && (e.TopLogprobs[0].Token != e.Token || e.TopLogprobs[0].Logprob != e.Logprob) {
			t.Errorf("entry %d: chosen %q %.6f, top %q %.6f", i, e.Token, e.Logprob, e.TopLogprobs[0].Token, e.TopLogprobs[0].Logprob)
		}
	}
}

func bytesOf(b []int64) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = byte(v)
	}
	return out
}

func TestSDKChatLogprobs(t *testing.T) {
	ref := exactEngine(t)
	const user, n, top = "Say something.", 10, 5
	prompt := ref.Tok.Encode(chatMLPrompt(t, user), tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
	gen := greedyResult(t, ref, chatMLPrompt(t, user), n).Tokens
	if len(gen) < 2 {
		t.Fatalf("the reference generated %d tokens: too few to check", len(gen))
	}
	refLP := refLogprobs(t, ref, append(slices.Clone(prompt), gen...))
	ts := startServer(t, Config{Backend: &Backend{Engine: exactEngine(t), ModelID: "demo"}})
	c := sdk(ts)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:       "demo",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(user)},
		MaxTokens:   openai.Int(n),
		Temperature: openai.Float(0),
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(top),
	}
	t.Run("complete", func(t *testing.T) {
		resp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		checkChatLogprobs(t, ref.Tok, resp.Choices[0].Logprobs.Content, refLP, prompt, gen, top)
	})
	t.Run("stream", func(t *testing.T) {
		st := c.Chat.Completions.NewStreaming(ctx, params)
		var content []openai.ChatCompletionTokenLogprob
		for st.Next() {
			for _, ch := range st.Current().Choices {
				content = append(content, ch.Logprobs.Content...)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		checkChatLogprobs(t, ref.Tok, content, refLP, prompt, gen, top)
	})
	t.Run("sampled", func(t *testing.T) {
		p := params
		p.Temperature, p.Seed = openai.Float(1.5), openai.Int(7)
		resp, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range resp.Choices[0].Logprobs.Content {
			first := e.TopLogprobs[0].Logprob
			if e.Logprob > first+1e-6 {
				t.Errorf("entry %d: chosen %q %.6f above the top entry %.6f", i, e.Token, e.Logprob, first)
			}
			for _, tl := range e.TopLogprobs {
				if tl.Token == e.Token && tl.Logprob != e.Logprob {
					t.Errorf("entry %d: chosen %q %.6f, in top_logprobs %.6f", i, e.Token, e.Logprob, tl.Logprob)
				}
			}
		}
	})
	t.Run("none asked", func(t *testing.T) {
		p := params
		p.Logprobs, p.TopLogprobs = openai.Opt(false), openai.Int(0)
		resp, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if raw := resp.Choices[0].JSON.Logprobs.Raw(); raw != "null" {
			t.Errorf("logprobs %s, want null", raw)
		}
	})
}

// lm-evaluation-harness's local-completions loglikelihood request: token
// ids, echo, logprobs 1, one generated token, temperature 0.
func TestSDKCompletionEcho(t *testing.T) {
	ref := exactEngine(t)
	prompt := ref.Tok.Encode("The quick brown fox jumps over the lazy dog", tokenizer.EncodeOptions{AddBOS: true})
	refLP := refLogprobs(t, ref, prompt)
	ts := startServer(t, Config{Backend: &Backend{Engine: exactEngine(t), ModelID: "demo"}})
	c := sdk(ts)
	ids := make([]int64, len(prompt))
	for i, id := range prompt {
		ids[i] = int64(id)
	}
	for _, stream := range []bool{false, true} {
		params := openai.CompletionNewParams{
			Model:       "demo",
			Prompt:      openai.CompletionNewParamsPromptUnion{OfArrayOfTokenArrays: [][]int64{ids}},
			MaxTokens:   openai.Int(1),
			Temperature: openai.Float(0),
			Logprobs:    openai.Int(1),
			Echo:        openai.Bool(true),
		}
		// OpenAI's shape has null for the first prompt token in both
		// arrays, which the SDK's typed fields cannot hold: read them raw.
		var text string
		var lp rawCompletionLogprobs
		add := func(raw string) {
			var l rawCompletionLogprobs
			if err := json.Unmarshal([]byte(raw), &l); err != nil {
				t.Fatalf("logprobs %s: %v", raw, err)
			}
			lp.Tokens = append(lp.Tokens, l.Tokens...)
			lp.TokenLogprobs = append(lp.TokenLogprobs, l.TokenLogprobs...)
			lp.TopLogprobs = append(lp.TopLogprobs, l.TopLogprobs...)
		}
		if !stream {
			resp, err := c.Completions.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			text = resp.Choices[0].Text
			add(resp.Choices[0].Logprobs.RawJSON())
		} else {
			st := c.Completions.NewStreaming(context.Background(), params)
			for st.Next() {
				for _, ch := range st.Current().Choices {
					text += ch.Text
					if raw := ch.Logprobs.RawJSON(); raw != "" && raw != "null" {
						add(raw)
					}
				}
			}
			if err := st.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if want := ref.Tok.Decode(prompt); len(text) < len(want) || text[:len(want)] != want {
			t.Errorf("stream %v: text %q does not start with the prompt %q", stream, text, want)
		}
		if len(lp.TokenLogprobs) != len(prompt)+1 || len(lp.TopLogprobs) != len(prompt)+1 || len(lp.Tokens) != len(prompt)+1 {
			t.Fatalf("stream %v: %d/%d/%d entries, want %d (prompt and one generated token)", stream,
				len(lp.Tokens), len(lp.TokenLogprobs), len(lp.TopLogprobs), len(prompt)+1)
		}
		if lp.TokenLogprobs[0] != nil || lp.TopLogprobs[0] != nil {
			t.Errorf("stream %v: the first prompt token has logprobs %v %v, want null", stream, lp.TokenLogprobs[0], lp.TopLogprobs[0])
		}
		for i := 1; i < len(prompt); i++ {
			want := refLP[i-1][prompt[i]]
			if d := math.Abs(*lp.TokenLogprobs[i] - want); d > lpTol {
				t.Errorf("stream %v: prompt token %d: logprob %.6f, log-softmax of trit logits %.6f", stream, i, *lp.TokenLogprobs[i], want)
			}
			// The chosen token is always in the map; with logprobs 1 the
			// map's largest value is the most likely token's.
			top := lp.TopLogprobs[i]
			if v, ok := top[lp.Tokens[i]]; !ok || v != *lp.TokenLogprobs[i] {
				t.Errorf("stream %v: prompt token %d (%q) missing from or different in top_logprobs %v", stream, i, lp.Tokens[i], top)
			}
			best := math.Inf(-1)
			for _, v := range top {
				best = max(best, v)
			}
			if math.Abs(best-topValues(refLP[i-1], 1)[0]) > lpTol {
				t.Errorf("stream %v: prompt token %d: best %.6f, reference %.6f", stream, i, best, topValues(refLP[i-1], 1)[0])
			}
		}
		// The generated token is the greedy choice after the prompt.
		g := len(prompt)
		if want := topValues(refLP[g-1], 1)[0]; math.Abs(*lp.TokenLogprobs[g]-want) > lpTol {
			t.Errorf("stream %v: generated token logprob %.6f, want the top %.6f", stream, *lp.TokenLogprobs[g], want)
		}
	}
}

// rawCompletionLogprobs is the completions logprobs object with its nulls.
type rawCompletionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
}

func TestLogprobsValidation(t *testing.T) {
	ts := startServer(t, Config{Backend: &Backend{Engine: demoEngine(t), ModelID: "demo"}})
	for _, tc := range []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21}`, "top_logprobs"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_logprobs":3}`, "top_logprobs"},
		{"/v1/completions", `{"prompt":"x","logprobs":-1}`, "logprobs"},
		{"/v1/completions", `{"prompt":"x","logprobs":99}`, "logprobs"},
	} {
		code, body := ts.post(t, tc.path, tc.body)
		var e struct {
			Error struct {
				Param string `json:"param"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(body), &e)
		if code != 400 || e.Error.Param != tc.param {
			t.Errorf("%s %s: %d %s, want 400 naming %s", tc.path, tc.body, code, body, tc.param)
		}
	}
}
