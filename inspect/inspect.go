// Package inspect summarises a GGUF file for people and tools: the
// architecture and its hyperparameters, the tokenizer, every tensor, the
// storage cost per type, how much of the model is ternary, the Hadamard
// rotation metadata of Bonsai 2 files, and anything unusual.
//
// A Report is plain data: WriteText renders it as aligned text and
// encoding/json renders it through its struct tags.
package inspect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"trit/gguf"
	"trit/quant"
)

// Report describes one GGUF file.
type Report struct {
	Version      uint32  `json:"version"`
	Size         int64   `json:"size"`
	Alignment    int64   `json:"alignment"`
	DataOffset   int64   `json:"data_offset"`
	Name         string  `json:"name,omitempty"`
	Architecture string  `json:"architecture"`
	FileType     *uint64 `json:"file_type,omitempty"`
	FileTypeName string  `json:"file_type_name,omitempty"`
	// Hyperparameters are the "<architecture>.*" keys, in file order.
	Hyperparameters []Param    `json:"hyperparameters"`
	Tokenizer       *Tokenizer `json:"tokenizer,omitempty"`
	Tensors         []Tensor   `json:"tensors"`
	// Types sums the tensors by storage format, largest first.
	Types []TypeSum `json:"types"`
	// All covers every tensor; Linear the 2-D tensors other than the token
	// embedding, i.e. the matrices a forward pass multiplies by.
	All      Weights   `json:"all"`
	Linear   Weights   `json:"linear"`
	Hadamard *Hadamard `json:"hadamard,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// Param is one metadata value. Value holds a JSON-friendly Go value:
// numbers, bools, strings and short arrays as themselves, anything else
// (non-finite floats, long or nested arrays) as formatted text.
type Param struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Tokenizer summarises the tokenizer.ggml.* keys.
type Tokenizer struct {
	Model  string `json:"model,omitempty"`
	Pre    string `json:"pre,omitempty"`
	Tokens int    `json:"tokens"`
	Merges int    `json:"merges"`
	BOS    *int64 `json:"bos_token_id,omitempty"`
	EOS    *int64 `json:"eos_token_id,omitempty"`
	PAD    *int64 `json:"padding_token_id,omitempty"`
	UNK    *int64 `json:"unknown_token_id,omitempty"`
	AddBOS *bool  `json:"add_bos_token,omitempty"`
	AddEOS *bool  `json:"add_eos_token,omitempty"`
	// ChatTemplate is the length in bytes of tokenizer.chat_template, 0
	// when there is none.
	ChatTemplate int `json:"chat_template_bytes"`
}

// Tensor is one row of the tensor table.
type Tensor struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Shape    []int64 `json:"shape"`
	Elements int64   `json:"elements"`
	Bytes    int64   `json:"bytes"`
}

// TypeSum totals the tensors of one format.
type TypeSum struct {
	Type     string  `json:"type"`
	Tensors  int     `json:"tensors"`
	Elements int64   `json:"elements"`
	Bytes    int64   `json:"bytes"`
	Bits     float64 `json:"bits_per_weight"`
}

// Weights totals a set of tensors.
type Weights struct {
	Tensors  int   `json:"tensors"`
	Elements int64 `json:"elements"`
	Bytes    int64 `json:"bytes"`
	// Bits is the true storage cost: 8·Bytes/Elements.
	Bits float64 `json:"bits_per_weight"`
	// Ternary counts the elements stored in ternary formats.
	Ternary         int64   `json:"ternary_elements"`
	TernaryFraction float64 `json:"ternary_fraction"`
}

// Hadamard summarises the prism.hadamard.* keys of a rotated (Bonsai 2)
// file. Fields absent from the file stay zero.
type Hadamard struct {
	Version       uint64   `json:"version"`
	BlockSize     uint64   `json:"block_size"`
	Transform     string   `json:"transform"`
	Axis          string   `json:"axis"`
	SignMode      string   `json:"sign_mode"`
	SignWidths    []int64  `json:"sign_widths,omitempty"`
	SignValues    int      `json:"sign_values"`
	WeightNames   int      `json:"weight_names"`
	InverseNames  []string `json:"inverse_weight_names,omitempty"`
	GDNVGrouped   *bool    `json:"gdn_v_grouped,omitempty"`
	MissingWeight int      `json:"missing_weight_names,omitempty"`
}

const hadamardPrefix = "prism.hadamard."

// knownPrefixes are the key namespaces a GGUF model file uses besides its
// architecture's own.
var knownPrefixes = []string{"general.", "tokenizer.", "prism.", "split.", "quantize.", "adapter.", "training."}

// fileTypes names the llama_ftype values (general.file_type), upstream's
// plus Prism ML's PQ2_0.
var fileTypes = map[uint64]string{
	0: "ALL_F32", 1: "MOSTLY_F16", 2: "MOSTLY_Q4_0", 3: "MOSTLY_Q4_1", 7: "MOSTLY_Q8_0",
	8: "MOSTLY_Q5_0", 9: "MOSTLY_Q5_1", 10: "MOSTLY_Q2_K", 11: "MOSTLY_Q3_K_S", 12: "MOSTLY_Q3_K_M",
	13: "MOSTLY_Q3_K_L", 14: "MOSTLY_Q4_K_S", 15: "MOSTLY_Q4_K_M", 16: "MOSTLY_Q5_K_S",
	17: "MOSTLY_Q5_K_M", 18: "MOSTLY_Q6_K", 24: "MOSTLY_IQ1_S", 32: "MOSTLY_BF16",
	36: "MOSTLY_TQ1_0", 37: "MOSTLY_TQ2_0", 38: "MOSTLY_MXFP4_MOE", 39: "MOSTLY_NVFP4",
	40: "MOSTLY_Q1_0", 41: "MOSTLY_Q2_0", 141: "MOSTLY_PQ2_0",
}

// New builds the report for f. It reads only metadata, never tensor data.
func New(f *gguf.File) *Report {
	r := &Report{
		Version:    f.Version,
		Size:       f.Size,
		Alignment:  f.Alignment,
		DataOffset: f.DataOffset,
	}
	r.Name, _ = f.String("general.name")
	r.Architecture, _ = f.String("general.architecture")
	if r.Architecture == "" {
		r.warn("general.architecture is missing")
	}
	if ft, ok := f.Uint("general.file_type"); ok {
		r.FileType = &ft
		r.FileTypeName = fileTypes[ft]
	}
	r.keys(f)
	r.tokenizer(f)
	r.tensors(f)
	r.hadamard(f)
	return r
}

func (r *Report) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// keys collects the hyperparameters and flags keys outside the known
// namespaces.
func (r *Report) keys(f *gguf.File) {
	arch := r.Architecture + "."
	r.Hyperparameters = []Param{}
	var unknown []string
	for _, kv := range f.KV {
		switch {
		case r.Architecture != "" && strings.HasPrefix(kv.Key, arch):
			r.Hyperparameters = append(r.Hyperparameters, Param{kv.Key, kv.Value.Type().String(), jsonValue(kv.Value)})
		case !slices.ContainsFunc(knownPrefixes, func(p string) bool { return strings.HasPrefix(kv.Key, p) }):
			unknown = append(unknown, kv.Key)
		}
	}
	if len(unknown) > 0 {
		r.warn("%d unknown keys: %s", len(unknown), strings.Join(unknown, ", "))
	}
}

// jsonValue converts v to something encoding/json renders faithfully.
func jsonValue(v gguf.Value) any {
	const maxArray = 64
	if v.Type() != gguf.TypeArray {
		if nonFinite(v) {
			return v.String()
		}
		return v.Interface()
	}
	if et, _ := v.ElemType(); et == gguf.TypeArray || v.Len() > maxArray {
		return v.String()
	}
	for i := range v.Len() {
		if nonFinite(v.Index(i)) {
			return v.String()
		}
	}
	if ints, ok := v.Ints(); ok {
		return ints // not []uint8, which encoding/json would turn into base64
	}
	return v.Interface()
}

func nonFinite(v gguf.Value) bool {
	switch x := v.Interface().(type) {
	case float32:
		return math.IsNaN(float64(x)) || math.IsInf(float64(x), 0)
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	}
	return false
}

func (r *Report) tokenizer(f *gguf.File) {
	const p = "tokenizer.ggml."
	t := &Tokenizer{}
	present := false
	for _, kv := range f.KV {
		present = present || strings.HasPrefix(kv.Key, "tokenizer.")
	}
	if !present {
		return
	}
	t.Model, _ = f.String(p + "model")
	t.Pre, _ = f.String(p + "pre")
	if v, ok := f.Lookup(p + "tokens"); ok {
		t.Tokens = v.Len()
	}
	if v, ok := f.Lookup(p + "merges"); ok {
		t.Merges = v.Len()
	}
	id := func(key string) *int64 {
		if x, ok := f.Int(p + key); ok {
			return &x
		}
		return nil
	}
	t.BOS, t.EOS, t.PAD, t.UNK = id("bos_token_id"), id("eos_token_id"), id("padding_token_id"), id("unknown_token_id")
	flag := func(key string) *bool {
		if b, ok := f.Bool(p + key); ok {
			return &b
		}
		return nil
	}
	t.AddBOS, t.AddEOS = flag("add_bos_token"), flag("add_eos_token")
	if s, ok := f.String("tokenizer.chat_template"); ok {
		t.ChatTemplate = len(s)
	}
	for _, x := range []*int64{t.BOS, t.EOS, t.PAD, t.UNK} {
		if x != nil && t.Tokens > 0 && (*x < 0 || *x >= int64(t.Tokens)) {
			r.warn("special token id %d is outside the vocabulary of %d", *x, t.Tokens)
		}
	}
	r.Tokenizer = t
}

func (w *Weights) add(t *gguf.Tensor) {
	w.Tensors++
	w.Elements += t.Elems()
	w.Bytes += t.Size
	if t.Format.Ternary {
		w.Ternary += t.Elems()
	}
}

func (w *Weights) finish() {
	if w.Elements > 0 {
		w.Bits = 8 * float64(w.Bytes) / float64(w.Elements)
		w.TernaryFraction = float64(w.Ternary) / float64(w.Elements)
	}
}

func (r *Report) tensors(f *gguf.File) {
	r.Tensors = make([]Tensor, 0, len(f.Tensors))
	sums := map[*quant.Format]*TypeSum{}
	resolved := map[*quant.Format]int{}
	var first *gguf.Tensor
	for _, t := range f.Tensors {
		r.Tensors = append(r.Tensors, Tensor{t.Name, t.Format.Name, slices.Clone(t.Dims), t.Elems(), t.Size})
		s := sums[t.Format]
		if s == nil {
			s = &TypeSum{Type: t.Format.Name}
			sums[t.Format] = s
		}
		s.Tensors++
		s.Elements += t.Elems()
		s.Bytes += t.Size
		r.All.add(t)
		if len(t.Dims) == 2 && t.Name != "token_embd.weight" {
			r.Linear.add(t)
		}
		if t.Resolution != "" {
			resolved[t.Format]++
			if first == nil {
				first = t
			}
		}
	}
	r.All.finish()
	r.Linear.finish()
	r.Types = make([]TypeSum, 0, len(sums))
	for _, s := range sums {
		s.Bits = 8 * float64(s.Bytes) / float64(s.Elements)
		r.Types = append(r.Types, *s)
	}
	slices.SortFunc(r.Types, func(a, b TypeSum) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Type, b.Type))
	})
	for format, n := range resolved {
		// The resolution reads "type 42 read as …: <why>"; keep the why.
		why := first.Resolution
		if i := strings.Index(why, "): "); i >= 0 {
			why = why[i+3:]
		}
		r.warn("%d tensors of type %d read as %s (group %d); %s: %s", n, format.Type, format.Name, format.Group, first.Name, why)
	}
}

func (r *Report) hadamard(f *gguf.File) {
	present := false
	for _, kv := range f.KV {
		present = present || strings.HasPrefix(kv.Key, hadamardPrefix)
	}
	if !present {
		return
	}
	h := &Hadamard{}
	h.Version, _ = f.Uint(hadamardPrefix + "version")
	h.BlockSize, _ = f.Uint(hadamardPrefix + "block_size")
	h.Transform, _ = f.String(hadamardPrefix + "transform")
	h.Axis, _ = f.String(hadamardPrefix + "axis")
	h.SignMode, _ = f.String(hadamardPrefix + "sign_mode")
	h.SignWidths, _ = f.Ints(hadamardPrefix + "sign_widths")
	if v, ok := f.Lookup(hadamardPrefix + "sign_values"); ok {
		h.SignValues = v.Len()
	}
	names, _ := f.Strings(hadamardPrefix + "weight_names")
	h.WeightNames = len(names)
	for _, n := range names {
		if f.Tensor(n) == nil {
			h.MissingWeight++
		}
	}
	if h.MissingWeight > 0 {
		r.warn("%d of %d prism.hadamard.weight_names are not tensors of this file", h.MissingWeight, len(names))
	}
	h.InverseNames, _ = f.Strings(hadamardPrefix + "inverse_weight_names")
	h.InverseNames = slices.Clone(h.InverseNames)
	if b, ok := f.Bool(hadamardPrefix + "gdn_v_grouped"); ok {
		h.GDNVGrouped = &b
	}
	var sum int64
	for _, w := range h.SignWidths {
		sum += w
	}
	if h.SignMode == "explicit" && sum != int64(h.SignValues) {
		r.warn("prism.hadamard.sign_values has %d entries, sign_widths sum to %d", h.SignValues, sum)
	}
	r.Hadamard = h
}
