package server

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"time"

	"trit/model"
	"trit/picture"
	"trit/tokenizer"
	"trit/vision"
)

// Images configures image input (OpenAI image_url content parts).
type Images struct {
	// AllowURLs lets the server fetch http(s) image URLs; without it only
	// data: URLs are accepted, since fetching what a request names is a
	// way into the server's network.
	AllowURLs bool
	// MaxBytes bounds an image file (default 20 MiB), MaxCount the images
	// of one request (default 16), FetchTimeout a URL fetch (default 10 s).
	MaxBytes     int64
	MaxCount     int
	FetchTimeout time.Duration
	// Budget is the token budget each image is resized to.
	Budget vision.Budget
}

func (c *Images) defaults() {
	if c.MaxBytes <= 0 {
		c.MaxBytes = 20 << 20
	}
	if c.MaxCount <= 0 {
		c.MaxCount = 16
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 10 * time.Second
	}
}

// imageURLs collects the image URLs of the messages, in prompt order.
func imageURLs(msgs []reqMessage) []string {
	var urls []string
	for _, m := range msgs {
		urls = append(urls, m.Content.images...)
	}
	return urls
}

// promptInput tokenizes a rendered prompt and, when it holds images,
// fetches, decodes and encodes them: the job's input and its prefix keys.
// A text prompt gives a nil input.
func (s *Server) promptInput(ctx context.Context, b *loadedBackend, prompt string, urls []string, param string) ([]int, *model.Input, []int, error) {
	opts := tokenizer.EncodeOptions{AddBOS: true, ParseSpecial: true}
	if len(urls) == 0 {
		return b.Engine.Tok.Encode(prompt, opts), nil, nil, nil
	}
	if b.Vision == nil {
		return nil, nil, nil, badRequest(param, "this model has no vision tower loaded: start with --mmproj")
	}
	cfg := s.cfg.Images
	if len(urls) > cfg.MaxCount {
		return nil, nil, nil, badRequest(param, "%d images in the request; at most %d", len(urls), cfg.MaxCount)
	}
	imgs := make([]*vision.Image, len(urls))
	for i, u := range urls {
		data, err := s.fetchImage(ctx, u)
		if err != nil {
			return nil, nil, nil, err
		}
		t0 := time.Now()
		// An error of the tower's loading is the server's (500); one of
		// encoding this image is the request's (400).
		var bad error
		err = b.Vision.Use(func(t *vision.Tower) error {
			imgs[i], bad = t.EncodeImage(data, picture.Limits{}, cfg.Budget)
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
		if bad != nil {
			return nil, nil, nil, badRequest(param, "image %d: %v", i, bad)
		}
		s.m.observeImage(time.Since(t0))
	}
	seq, err := vision.BuildSequence(b.Engine.Tok, prompt, imgs, opts)
	if err != nil {
		return nil, nil, nil, badRequest(param, "%v", err)
	}
	return seq.Tokens, &seq.Input, seq.Keys(), nil
}

// fetchImage returns the bytes of an image URL: a base64 data: URL, or,
// when allowed, an http(s) URL fetched within the size and time limits.
func (s *Server) fetchImage(ctx context.Context, u string) ([]byte, error) {
	cfg := s.cfg.Images
	const param = "image_url.url"
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, payload, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, badRequest(param, "a data: URL must be base64 (data:image/png;base64,...)")
		}
		if int64(base64.StdEncoding.DecodedLen(len(payload))) > cfg.MaxBytes+3 {
			return nil, badRequest(param, "the image is over %d bytes", cfg.MaxBytes)
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, badRequest(param, "the data: URL is not valid base64: %v", err)
		}
		return data, nil
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, badRequest(param, "image URLs must be data: or http(s): URLs")
	}
	if !cfg.AllowURLs {
		return nil, badRequest(param, "this server does not fetch image URLs (start it with --allow-image-urls); send the image as a data: URL")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return nil, badRequest(param, "bad image URL: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, badRequest(param, "fetching the image: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, badRequest(param, "fetching the image: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, cfg.MaxBytes+1))
	if err != nil {
		return nil, badRequest(param, "fetching the image: %v", err)
	}
	if int64(len(data)) > cfg.MaxBytes {
		return nil, badRequest(param, "the image is over %d bytes", cfg.MaxBytes)
	}
	return data, nil
}
