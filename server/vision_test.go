package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"trit/chat"
	"trit/engine"
	"trit/gguf"
	"trit/internal/testdata"
	"trit/model"
	_ "trit/model/qwen35"
	"trit/picture"
	"trit/sample"
	"trit/tokenizer"
	"trit/vision"
)

// visionBackend serves the reference-vision text model with its tower.
func visionBackend(t *testing.T) (*Backend, *vision.Lazy, string) {
	dir := testdata.Path(t, "reference-vision")
	m, err := model.Load(filepath.Join(dir, "qwen35v-text-f32.gguf"), model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	f, err := gguf.Open(filepath.Join(dir, "qwen35v-text-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromMetadata(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	lz, err := vision.NewLazy(filepath.Join(dir, "mmproj-qwen35v-f32.gguf"), vision.Options{Threads: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lz.Close() })
	eng := &engine.Engine{Model: m, Tok: tok, EOG: []int{514}, Batch: 16}
	return &Backend{Engine: eng, Vision: lz}, lz, dir
}

func dataURL(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
}

func imageRequest(text string, urls ...string) string {
	parts := []map[string]any{}
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}})
	}
	parts = append(parts, map[string]any{"type": "text", "text": text})
	b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": parts}},
		"max_tokens": 6, "temperature": 0})
	return string(b)
}

func metricValue(t *testing.T, ts *testServer, name string) float64 {
	t.Helper()
	_, body := ts.get(t, "/metrics")
	m := regexp.MustCompile(`(?m)^trit_` + name + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no metric %s in\n%s", name, body)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImageChat: a text request on a server with a tower never loads it
// (its resident bytes stay 0); an image request loads it, counts the
// image, and answers what engine.GenerateInput answers for the same
// sequence, also when the next turn reuses the cached image prefix.
func TestImageChat(t *testing.T) {
	b, lz, dir := visionBackend(t)
	ts := startServer(t, Config{Backend: b})
	code, body := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":4}`)
	if code != 200 {
		t.Fatalf("text request: %d %s", code, body)
	}
	if v := metricValue(t, ts, "vision_tower_resident_bytes"); v != 0 || lz.Loads() != 0 {
		t.Fatalf("after a text request the tower holds %g bytes (%d loads)", v, lz.Loads())
	}
	img := filepath.Join(dir, "vis-a-64x48.png")
	for turn := range 2 {
		code, body = ts.post(t, "/v1/chat/completions", imageRequest("Describe this image.", dataURL(t, img)))
		if code != 200 {
			t.Fatalf("image request: %d %s", code, body)
		}
		var resp struct {
			Choices []struct {
				Message struct{ Content string }
			}
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		want := referenceAnswer(t, b, img)
		if got := resp.Choices[0].Message.Content; got != want {
			t.Errorf("turn %d: answer %q, engine gives %q", turn, got, want)
		}
	}
	if v := metricValue(t, ts, "vision_tower_resident_bytes"); v == 0 {
		t.Error("the tower is not resident after an image request")
	}
	if v := metricValue(t, ts, "images_total"); v != 2 {
		t.Errorf("images_total %g, want 2", v)
	}
	if v := metricValue(t, ts, "image_encode_seconds_total"); !(v > 0) {
		t.Errorf("image_encode_seconds_total %g", v)
	}
}

// referenceAnswer is the greedy answer of the engine for the request
// imageRequest builds, rendered with ChatML as the server does.
func referenceAnswer(t *testing.T, b *Backend, img string) string {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	var im *vision.Image
	if err := b.Vision.Use(func(tw *vision.Tower) error {
		im, err = tw.EncodeImage(data, picture.Limits{}, vision.Budget{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	prompt, err := chat.ChatML().Render([]chat.Message{{Role: "user", Content: vision.Marker + "\nDescribe this image."}}, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := vision.BuildSequence(b.Engine.Tok, prompt, []*vision.Image{im}, tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true})
	if err != nil {
		t.Fatal(err)
	}
	m := b.Engine.Model
	st, err := m.NewState(256)
	if err != nil {
		t.Fatal(err)
	}
	p := sample.DefaultParams()
	p.Temperature = 0
	res, err := b.Engine.GenerateInput(context.Background(), st, seq.Input, engine.Params{MaxTokens: 6, Sample: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Text
}

// TestImageBadInput: every malformed image request is a 400 that says why.
func TestImageBadInput(t *testing.T) {
	b, _, dir := visionBackend(t)
	png, err := os.ReadFile(filepath.Join(dir, "vis-a-64x48.png"))
	if err != nil {
		t.Fatal(err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			<-r.Context().Done()
		case "/missing":
			http.NotFound(w, r)
		default:
			w.Write(png)
		}
	}))
	defer slow.Close()
	good := dataURL(t, filepath.Join(dir, "vis-a-64x48.png"))
	b64 := func(p []byte) string { return "data:image/png;base64," + base64.StdEncoding.EncodeToString(p) }
	tests := []struct {
		name string
		cfg  Images
		body string
		want string
	}{
		{"not base64", Images{}, imageRequest("x", "data:image/png;base64,@@@not base64@@@"), "not valid base64"},
		{"data URL without base64", Images{}, imageRequest("x", "data:image/png,rawbytes"), "must be base64"},
		{"http without the flag", Images{}, imageRequest("x", slow.URL+"/a.png"), "--allow-image-urls"},
		{"ftp", Images{AllowURLs: true}, imageRequest("x", "ftp://example.com/a.png"), "data: or http(s)"},
		{"too many", Images{MaxCount: 1}, imageRequest("x", good, good), "at most 1"},
		{"too large", Images{MaxBytes: 100}, imageRequest("x", good), "over 100 bytes"},
		{"truncated", Images{}, imageRequest("x", b64(png[:len(png)/2])), "picture: png"},
		{"unsupported", Images{}, imageRequest("x", b64([]byte("BM this is no image"))), "unsupported image format"},
		{"fetch too large", Images{AllowURLs: true, MaxBytes: 100}, imageRequest("x", slow.URL+"/a.png"), "over 100 bytes"},
		{"fetch timeout", Images{AllowURLs: true, FetchTimeout: 100 * time.Millisecond}, imageRequest("x", slow.URL+"/slow"), "fetching the image"},
		{"fetch 404", Images{AllowURLs: true}, imageRequest("x", slow.URL+"/missing"), "404"},
	}
	ts := startServer(t, Config{Backend: b, Images: Images{AllowURLs: true}})
	// Several images in one message: a data: URL and, with the flag, an
	// http URL.
	if code, body := ts.post(t, "/v1/chat/completions", imageRequest("x", good, slow.URL+"/a.png")); code != 200 {
		t.Fatalf("two images, one by http URL: %d %s", code, body)
	}
	ts.stop()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, Config{Backend: b, Images: tt.cfg})
			code, body := ts.post(t, "/v1/chat/completions", tt.body)
			if code != 400 || !strings.Contains(body, tt.want) {
				t.Errorf("status %d, body %s: want 400 mentioning %q", code, body, tt.want)
			}
		})
	}
}
