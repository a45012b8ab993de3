package gguf

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"testing"
	"trit/internal/mmapfile"
	"trit/internal/testdata"

	"trit/quant"
)

// fuzzSeeds returns small valid files covering every value type, nested
// arrays, several tensor formats and both meanings of type 42.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	build := func(fill func(w *Writer)) {
		w := NewWriter()
		fill(w)
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	build(func(w *Writer) {
		w.AddKV("general.architecture", String("qwen3"))
		w.AddKV("u8", Uint8(1))
		w.AddKV("i8", Int8(-1))
		w.AddKV("u16", Uint16(2))
		w.AddKV("i16", Int16(-2))
		w.AddKV("u32", Uint32(3))
		w.AddKV("i32", Int32(-3))
		w.AddKV("f32", Float32(0.5))
		w.AddKV("b", Bool(true))
		w.AddKV("u64", Uint64(4))
		w.AddKV("i64", Int64(-4))
		w.AddKV("f64", Float64(0.25))
		w.AddKV("tokens", Array([]string{"a", "bc", ""}))
		w.AddKV("ids", Array([]int32{1, 2, 3}))
		w.AddKV("nested", Array([]Value{Array([]uint8{1}), Array([]Value{Array([]bool{true})})}))
		w.AddTensor("a", quant.F32, []int64{4, 2}, make([]byte, 32))
		w.AddTensor("b", quant.Q8_0, []int64{32}, make([]byte, 34))
		w.AddTensor("c", quant.TQ2_0, []int64{256}, make([]byte, 66))
	})
	for _, q := range []*quant.Format{quant.Q2_0, quant.Q2_0g64} {
		build(func(w *Writer) {
			w.AddTensor("w", q, []int64{128, 32}, make([]byte, 32*128/q.BlockElems*q.BlockBytes))
			w.AddTensor("n", quant.F32, []int64{8}, make([]byte, 32))
		})
	}
	build(func(w *Writer) {
		w.AddKV(KeyAlignment, Uint32(64))
		w.AddTensor("h", quant.F16, []int64{3}, make([]byte, 6))
		w.AddTensor("q", quant.Q1_0, []int64{128}, make([]byte, 18))
	})
	return seeds
}

func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	// The header prefixes of the real files (whole files are too big to be
	// useful seeds).
	if dir, ok := testdata.Lookup("reference"); ok {
		for _, name := range []string{"qwen3-tern-Q2_0g128.gguf", "qwen35-tern-mix-TQ2_0.gguf"} {
			if b, err := os.ReadFile(dir + "/" + name); err == nil {
				f.Add(b[:min(len(b), 4096)])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := parseBytes(data)
		runtime.ReadMemStats(&after)
		// Bounded by the input: a KV or tensor struct is a few times its
		// smallest encoding, plus fixed buffers.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(data)+512<<10); got > limit {
			t.Fatalf("parsing %d bytes allocated %d (limit %d)", len(data), got, limit)
		}
		// The mapped path decodes straight from memory; it must agree.
		mapped := &File{Size: int64(len(data)), m: mmapfile.FromBytes(data)}
		if merr := mapped.parse(); (merr == nil) != (err == nil) || (err != nil && merr.Error() != err.Error()) {
			t.Fatalf("mapped parse: %v, reader parse: %v", merr, err)
		}
		if err != nil {
			if file != nil {
				t.Fatal("file and error both returned")
			}
			return
		}
		if len(mapped.KV) != len(file.KV) || len(mapped.Tensors) != len(file.Tensors) {
			t.Fatal("mapped and reader parses differ")
		}
		for _, kv := range file.KV {
			_ = kv.Value.String()
			kv.Value.Ints()
			kv.Value.Floats()
		}
		for _, tn := range file.Tensors {
			d, err := tn.Data()
			if err != nil || int64(len(d)) != tn.Size {
				t.Fatalf("tensor %s: %d bytes, %v", tn.Name, len(d), err)
			}
		}
		var once bytes.Buffer
		if _, err := rewrite(t, file).WriteTo(&once); err != nil {
			t.Fatal(err)
		}
		again, err := parseBytes(once.Bytes())
		if errors.Is(err, ErrAmbiguous) {
			// An original that only its unpadded end disambiguated is
			// ambiguous once the writer pads it.
			return
		}
		if err != nil {
			t.Fatalf("rewritten file: %v", err)
		}
		if len(again.KV) != len(file.KV) || len(again.Tensors) != len(file.Tensors) {
			t.Fatal("rewritten file has different contents")
		}
		for i, kv := range file.KV {
			if again.KV[i].Key != kv.Key || !sameValue(again.KV[i].Value, kv.Value) {
				t.Fatalf("KV %q changed", kv.Key)
			}
		}
		for i, tn := range file.Tensors {
			a, b := again.Tensors[i], tn
			da, _ := a.Data()
			db, _ := b.Data()
			if a.Name != b.Name || a.Format != b.Format || !bytes.Equal(da, db) {
				t.Fatalf("tensor %q changed", tn.Name)
			}
		}
		var twice bytes.Buffer
		rewrite(t, again).WriteTo(&twice)
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatal("writing is not idempotent")
		}
	})
}
