//go:build unix

package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeSIGTERM runs `trit serve` on the demo model, starts a streamed
// answer, sends SIGTERM, and expects the answer to finish and the command
// to exit cleanly.
func TestServeSIGTERM(t *testing.T) {
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- Main([]string{"serve", "--port", "0", "-c", "1024", "--parallel", "2", "--drain-timeout", "10s"}, &bytes.Buffer{}, &stderr)
	}()
	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var base string
	deadline := time.Now().Add(10 * time.Second)
	for base == "" {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not start:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for {
		resp, err := client.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("never healthy:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":500,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	_, err = br.WriteTo(&rest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rest.String(), `"finish_reason":"length"`) || !strings.HasSuffix(rest.String(), "data: [DONE]\n\n") {
		t.Errorf("the stream in flight did not finish:\n%s", rest.String())
	}
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit code %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("trit serve did not exit after SIGTERM:\n%s", stderr.String())
	}
	// The request was in flight when the shutdown began: its log line
	// (written when it ends) comes after the shutdown's.
	log := stderr.String()
	shut, done := strings.Index(log, `msg="shutting down"`), strings.Index(log, "path=/v1/chat/completions status=200")
	if shut < 0 || done < shut {
		t.Errorf("shutdown at %d, request end at %d:\n%s", shut, done, log)
	}
}
