package qwen35_test

import (
	"path/filepath"
	"strings"
	"testing"

	"trit/gguf"
	"trit/model"
	"trit/quant"
)

// rewrite copies the GGUF file src to dst, letting edit change the
// metadata and dropping the tensors whose names drop reports.
func rewrite(t *testing.T, src, dst string, edit func(*[]gguf.KV), drop func(string) bool) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kvs := append([]gguf.KV(nil), f.KV...)
	if edit != nil {
		edit(&kvs)
	}
	w := gguf.NewWriter()
	for _, kv := range kvs {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range f.Tensors {
		if drop != nil && drop(tn.Name) {
			continue
		}
		data, err := tn.Data()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(tn.Name, tn.Format, tn.Dims, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
}

// TestLoadErrors checks that malformed files are refused with an error
// naming the problem, never a panic.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	src := smallSynth().write(t, dir)
	u := func(x uint32) gguf.Value { return gguf.Uint32(x) }
	cases := []struct {
		name string
		edit func(*[]gguf.KV)
		drop func(string) bool
		want string
	}{
		{"missing conv kernel", func(k *[]gguf.KV) { delKV(k, "qwen35.ssm.conv_kernel") }, nil, "ssm.conv_kernel"},
		{"inner size", func(k *[]gguf.KV) { setKV(k, "qwen35.ssm.inner_size", u(60)) }, nil, "inner_size"},
		{"value heads", func(k *[]gguf.KV) { setKV(k, "qwen35.ssm.time_step_rank", u(3)) }, nil, "value heads"},
		{"kv heads", func(k *[]gguf.KV) { setKV(k, "qwen35.attention.head_count_kv", u(3)) }, nil, "kv heads"},
		{"zero hidden", func(k *[]gguf.KV) { setKV(k, "qwen35.embedding_length", u(0)) }, nil, "embedding_length"},
		{"huge state", func(k *[]gguf.KV) {
			setKV(k, "qwen35.ssm.state_size", u(1<<12))
			setKV(k, "qwen35.ssm.inner_size", u(4<<12))
		}, nil, "recurrent state"},
		{"MTP count", func(k *[]gguf.KV) { setKV(k, "qwen35.nextn_predict_layers", u(4)) }, nil, "MTP"},
		{"interval", func(k *[]gguf.KV) { setKV(k, "qwen35.full_attention_interval", u(0)) }, nil, "interval"},
		{"wrong layer kind", func(k *[]gguf.KV) { setKV(k, "qwen35.full_attention_interval", u(2)) }, nil, "blk.1.attn_q.weight"},
		{"missing conv", nil, func(n string) bool { return n == "blk.1.ssm_conv1d.weight" }, "blk.1.ssm_conv1d.weight"},
		{"missing embedding", nil, func(n string) bool { return n == "token_embd.weight" }, "token_embd"},
		{"missing gate", nil, func(n string) bool { return n == "blk.0.ssm_alpha.weight" }, "ssm_alpha"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "bad.gguf")
			rewrite(t, src, dst, tc.edit, tc.drop)
			m, err := model.Load(dst, model.Options{Threads: 1, CacheK: quant.F32, CacheV: quant.F32})
			if err == nil {
				m.Close()
				t.Fatal("loaded without error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
