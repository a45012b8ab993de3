package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"trit/gguf"
	"trit/half"
	"trit/quant"
	"trit/tokenizer"
)

// Types chooses the tensor formats of a synthetic model. Weight is the
// format of every layer matrix and must be ternary; Embd (token_embd) and
// Head (output.weight, untied shapes only) default to Weight when nil and
// may be any format with an encoder (Q4_K, Q6_K, Q8_0, F16, ...), as in
// llama-quantize's --token-embedding-type and --output-tensor-type.
type Types struct {
	Weight, Embd, Head *quant.Format
}

// For returns the format of a tensor role.
func (t Types) For(r Role) *quant.Format {
	switch r {
	case RoleEmbd:
		if t.Embd != nil {
			return t.Embd
		}
	case RoleHead:
		if t.Head != nil {
			return t.Head
		}
		if t.Embd != nil {
			return t.Embd
		}
	case RoleFloat:
		return quant.F32
	}
	return t.Weight
}

// String names the types the way the table's type column shows them:
// "TQ2_0", or "TQ2_0 (embd Q4_K, head Q6_K)" for a mix.
func (t Types) String() string {
	s := t.Weight.Name
	var extra []string
	if e := t.For(RoleEmbd); e != t.Weight {
		extra = append(extra, "embd "+e.Name)
	}
	if h := t.For(RoleHead); h != t.For(RoleEmbd) {
		extra = append(extra, "head "+h.Name)
	}
	if len(extra) == 0 {
		return s
	}
	s += " ("
	for i, e := range extra {
		if i > 0 {
			s += ", "
		}
		s += e
	}
	return s + ")"
}

// Errors of WriteSynthetic.
var (
	ErrNotTernary = errors.New("bench: layer weights must be a ternary format")
	ErrBadShape   = errors.New("bench: shape does not fit the format's blocks")
)

// Size returns the bytes of tensor data a synthetic model of shape s in
// types t holds (the file adds metadata and alignment padding).
func Size(s *Shape, t Types) (int64, error) {
	var n int64
	for _, ts := range s.Tensors() {
		b, err := t.For(ts.Role).RowBytes(ts.Elems())
		if err != nil {
			return 0, fmt.Errorf("%w: %s %v in %s", ErrBadShape, ts.Name, ts.Dims, t.For(ts.Role).Name)
		}
		n += b
	}
	return n, nil
}

// check validates the formats against the shape before anything is
// written, so that a bad combination fails fast instead of gigabytes in.
func check(s *Shape, t Types) error {
	if t.Weight == nil || !t.Weight.Ternary || layouts[t.Weight] == nil {
		return fmt.Errorf("%w: %v", ErrNotTernary, t.Weight)
	}
	for _, ts := range s.Tensors() {
		if ts.Dims[0]%int64(t.For(ts.Role).BlockElems) != 0 {
			return fmt.Errorf("%w: %s has rows of %d, %s blocks hold %d",
				ErrBadShape, ts.Name, ts.Dims[0], t.For(ts.Role).Name, t.For(ts.Role).BlockElems)
		}
	}
	return nil
}

// WriteSynthetic writes a GGUF model of shape s with random weights in
// types t to w and returns the bytes written. The same seed gives the same
// bytes. Ternary tensors are random valid codes written straight into the
// packed blocks (no float encoding), so even the 27B shape is written at
// disk speed; other formats cycle through a few rows encoded from random
// floats. The file carries a byte-level tokenizer of the right size, so
// llama.cpp loads it as well.
func WriteSynthetic(w io.Writer, s *Shape, t Types, seed uint64) (int64, error) {
	gw, err := newWriter(s, t, seed)
	if err != nil {
		return 0, err
	}
	return gw.WriteTo(w)
}

// WriteSyntheticFile is WriteSynthetic to a file, written under a temporary
// name and renamed into place.
func WriteSyntheticFile(path string, s *Shape, t Types, seed uint64) error {
	gw, err := newWriter(s, t, seed)
	if err != nil {
		return err
	}
	return gw.WriteFile(path)
}

func newWriter(s *Shape, t Types, seed uint64) (*gguf.Writer, error) {
	if err := check(s, t); err != nil {
		return nil, err
	}
	w := gguf.NewWriter()
	if err := addKV(w, s, t); err != nil {
		return nil, err
	}
	for i, ts := range s.Tensors() {
		f := t.For(ts.Role)
		// One stream per tensor keeps tensors independent of the order
		// they are written in.
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		var write func(io.Writer) error
		switch {
		case ts.Role == RoleFloat:
			write = floatWriter(ts, rng)
		case layouts[f] != nil:
			write = ternaryWriter(ts, f, rng, s.scaleFor(ts))
		default:
			write = poolWriter(ts, f, rng, s.scaleFor(ts))
		}
		if err := w.AddTensorFunc(ts.Name, f, ts.Dims, write); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// scaleFor is the weight magnitude that keeps activations near unit
// scale: 1/√(fan-in·2/3) for uniform ternary codes (their variance is 2/3).
func (s *Shape) scaleFor(ts TensorSpec) float32 {
	return float32(1 / math.Sqrt(float64(ts.Dims[0])*2/3))
}

func addKV(w *gguf.Writer, s *Shape, t Types) error {
	a := s.Arch + "."
	kv := []struct {
		k string
		v gguf.Value
	}{
		{"general.architecture", gguf.String(s.Arch)},
		{"general.name", gguf.String(fmt.Sprintf("trit bench synthetic %s %s (random ternary weights)", s.Name, t))},
		{"general.quantization_version", gguf.Uint32(2)},
		{a + "context_length", gguf.Uint32(uint32(s.ContextLen))},
		{a + "embedding_length", gguf.Uint32(uint32(s.Hidden))},
		{a + "block_count", gguf.Uint32(uint32(s.Layers))},
		{a + "feed_forward_length", gguf.Uint32(uint32(s.FFN))},
		{a + "attention.head_count", gguf.Uint32(uint32(s.Heads))},
		{a + "attention.head_count_kv", gguf.Uint32(uint32(s.KVHeads))},
		{a + "attention.key_length", gguf.Uint32(uint32(s.HeadDim))},
		{a + "attention.value_length", gguf.Uint32(uint32(s.HeadDim))},
		{a + "attention.layer_norm_rms_epsilon", gguf.Float32(1e-6)},
		{a + "rope.freq_base", gguf.Float32(float32(s.RopeBase))},
		{a + "vocab_size", gguf.Uint32(uint32(s.Vocab))},
	}
	if s.RopeDims > 0 {
		kv = append(kv, struct {
			k string
			v gguf.Value
		}{a + "rope.dimension_count", gguf.Uint32(uint32(s.RopeDims))})
	}
	if s.Arch == "qwen35" {
		for _, e := range []struct {
			k string
			v gguf.Value
		}{
			{a + "rope.dimension_sections", gguf.Array(s.RopeSections[:])},
			{a + "ssm.conv_kernel", gguf.Uint32(uint32(s.SSMConv))},
			{a + "ssm.state_size", gguf.Uint32(uint32(s.SSMHeadDim))},
			{a + "ssm.group_count", gguf.Uint32(uint32(s.SSMKeyHeads))},
			{a + "ssm.time_step_rank", gguf.Uint32(uint32(s.SSMValueHeads))},
			{a + "ssm.inner_size", gguf.Uint32(uint32(s.SSMValueHeads * s.SSMHeadDim))},
			{a + "full_attention_interval", gguf.Uint32(uint32(s.FullAttnInterval))},
		} {
			kv = append(kv, e)
		}
	}
	kv = append(kv, tokenizerKV(s)...)
	for _, e := range kv {
		if err := w.AddKV(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// tokenizerKV is a byte-level BPE vocabulary of exactly s.Vocab tokens: the
// 256 byte tokens, three ChatML specials, then distinct filler tokens. No
// merges: enough for any runtime to load the file and tokenize text.
func tokenizerKV(s *Shape) []struct {
	k string
	v gguf.Value
} {
	tokens := make([]string, s.Vocab)
	types := make([]int32, s.Vocab)
	specials := []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
	for i := range tokens {
		switch {
		case i < 256:
			tokens[i], types[i] = tokenizer.ByteToken(byte(i)), tokenizer.TypeNormal
		case i < 256+len(specials):
			tokens[i], types[i] = specials[i-256], tokenizer.TypeControl
		default:
			tokens[i], types[i] = fmt.Sprintf("tok%d", i), tokenizer.TypeNormal
		}
	}
	pre := "qwen2"
	if s.Arch == "qwen35" {
		pre = "qwen35"
	}
	eos := uint32(min(258, s.Vocab-1))
	return []struct {
		k string
		v gguf.Value
	}{
		{"tokenizer.ggml.model", gguf.String("gpt2")},
		{"tokenizer.ggml.pre", gguf.String(pre)},
		{"tokenizer.ggml.tokens", gguf.Array(tokens)},
		{"tokenizer.ggml.token_type", gguf.Array(types)},
		{"tokenizer.ggml.merges", gguf.Array([]string{})},
		{"tokenizer.ggml.eos_token_id", gguf.Uint32(eos)},
		{"tokenizer.ggml.padding_token_id", gguf.Uint32(uint32(min(256, s.Vocab-1)))},
		{"tokenizer.ggml.add_bos_token", gguf.Bool(false)},
	}
}

// floatWriter writes a small F32 tensor: norm weights 1, ssm_a (−exp(A_log))
// in [−2, −0.5], dt bias 0, convolution taps in [−0.5, 0.5].
func floatWriter(ts TensorSpec, rng *rand.Rand) func(io.Writer) error {
	n := ts.Elems()
	return func(w io.Writer) error {
		vals := make([]float32, n)
		for i := range vals {
			switch {
			case hasSuffix(ts.Name, "ssm_a"):
				vals[i] = -0.5 - 1.5*rng.Float32()
			case hasSuffix(ts.Name, "ssm_dt.bias"):
				vals[i] = 0
			case hasSuffix(ts.Name, "ssm_conv1d.weight"):
				vals[i] = rng.Float32() - 0.5
			default:
				vals[i] = 1
			}
		}
		buf := make([]byte, 4*n)
		for i, v := range vals {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		_, err := w.Write(buf)
		return err
	}
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// chunkBytes is how much tensor data is generated per Write.
const chunkBytes = 1 << 20

// ternaryWriter fills a ternary tensor block by block with random valid
// codes and the scale d.
func ternaryWriter(ts TensorSpec, f *quant.Format, rng *rand.Rand, d float32) func(io.Writer) error {
	size, _ := f.RowBytes(ts.Elems()) // checked by check
	l := layouts[f]
	dbits := half.FromFloat32(d)
	return func(w io.Writer) error {
		per := max(1, chunkBytes/f.BlockBytes)
		buf := make([]byte, per*f.BlockBytes)
		for left := size; left > 0; {
			n := min(int64(len(buf)), left)
			chunk := buf[:n]
			l.fill(chunk, f.BlockBytes, dbits, rng)
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			left -= n
		}
		return nil
	}
}

// poolWriter writes a tensor of a non-ternary format as rows drawn from a
// small pool of rows encoded from random floats in [−d√3, d√3]: always
// valid blocks, at the cost of a few encodes.
func poolWriter(ts TensorSpec, f *quant.Format, rng *rand.Rand, d float32) func(io.Writer) error {
	const poolRows = 32
	cols := ts.Dims[0]
	rows := ts.Elems() / cols
	return func(w io.Writer) error {
		rb, err := f.RowBytes(cols)
		if err != nil {
			return err
		}
		pool := make([][]byte, poolRows)
		vals := make([]float32, cols)
		a := d * float32(math.Sqrt(3))
		for i := range pool {
			for j := range vals {
				vals[j] = a * (2*rng.Float32() - 1)
			}
			pool[i] = make([]byte, rb)
			if err := f.Encode(pool[i], vals); err != nil {
				return err
			}
		}
		for range rows {
			if _, err := w.Write(pool[rng.IntN(poolRows)]); err != nil {
				return err
			}
		}
		return nil
	}
}
