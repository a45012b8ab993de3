package demo

import (
	"bytes"
	"testing"
	"time"
)

func TestBytesDeterministic(t *testing.T) {
	t0 := time.Now()
	a, err := Bytes()
	if err != nil {
		t.Fatal(err)
	}
	t.Log("build", time.Since(t0))
	b, err := Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the demo model differ")
	}
	t1 := time.Now()
	f, err := File()
	if err != nil {
		t.Fatal(err)
	}
	t.Log("file", time.Since(t1))
	defer f.Close()
}
