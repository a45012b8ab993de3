package convert

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"trit/gguf"
	"trit/hadamard"
	"trit/half"
	"trit/internal/atomicfile"
	"trit/model"
	"trit/model/checkpoint"
	"trit/quant"
	"trit/safetensors"
	"trit/tokenizer"
)

// Options control the GGUF ⇄ MLX conversions.
type Options struct {
	// AllowLossy lets a conversion change values (reported in the
	// Report) instead of refusing it.
	AllowLossy bool
	// Progress, if set, receives a progress line for outputs over 64 MiB.
	Progress io.Writer
}

// Report says what a conversion did.
type Report struct {
	Tensors int
	Bytes   int64
	// Lossy lists the tensors whose values changed, with how many of
	// their groups (or elements) differ; empty for a lossless conversion.
	Lossy []string
	// Notes are remarks on storage changes that keep every value.
	Notes []string
}

// ErrLossy is returned when a conversion would change a value and
// Options.AllowLossy is not set.
var ErrLossy = errors.New("convert: conversion would change values (use --allow-lossy to accept)")

// mlxTensor is one tensor of the pack being written. Its data is made
// while the file is written, so a conversion holds one module at a time.
type mlxTensor struct {
	name  string
	dtype safetensors.DType
	shape []int64
	data  func() ([]byte, error)
}

// bytesOf is a data function of bytes already at hand.
func bytesOf(b []byte) func() ([]byte, error) { return func() ([]byte, error) { return b, nil } }

// parts shares one build of several tensors' data among their data
// functions, releasing it when the last part is taken.
func parts(n int, build func() ([][]byte, error)) []func() ([]byte, error) {
	var got [][]byte
	var err error
	taken := 0
	fs := make([]func() ([]byte, error), n)
	for i := range fs {
		fs[i] = func() ([]byte, error) {
			if got == nil && err == nil {
				got, err = build()
			}
			if err != nil {
				return nil, err
			}
			b := got[i]
			if taken++; taken == n {
				got = nil
			}
			return b, nil
		}
	}
	return fs
}

// ToMLX writes the GGUF-named model src as an MLX pack in the new folder
// dir: config.json, model.safetensors, tokenizer.json,
// tokenizer_config.json and generation_config.json. Ternary matrices
// become 2-bit affine modules (scale d, bias −d, codes q = t+1: exactly
// the Q2_0 code bytes) in groups of 128 (64 for Q2_0_g64 sources, and
// where a value head is narrower), Q1_0 1-bit modules (scale 2d, bias −d);
// float tensors keep their dtype; other quantized tensors are carried as
// F32, which keeps their values. The folder appears only when complete.
func ToMLX(src model.Source, dir string, opt Options) (*Report, error) {
	meta := src.Meta()
	arch, _ := meta.String("general.architecture")
	if arch != "qwen3" && arch != "qwen35" {
		return nil, fmt.Errorf("%w: MLX packs of architecture %q (known: qwen3, qwen35)", checkpoint.ErrUnsupported, arch)
	}
	vh, err := vheadsOf(meta, arch)
	if err != nil {
		return nil, err
	}
	decl, err := hadamard.FromKeys(meta, meta.Keys())
	if err != nil {
		return nil, err
	}
	layout := "grouped"
	if decl != nil && vh != nil {
		if decl.GDNVGrouped {
			vh.keepOut = decl
		} else {
			// A rotated ssm_out over tiled columns cannot be reordered:
			// the pack keeps GGUF's order and says so.
			vh, layout = nil, "tiled"
		}
	}
	rep := &Report{}
	var tensors []mlxTensor
	specs := map[string]mlxSpec{} // module path → quantization
	for _, t := range src.Tensors() {
		hf, ok := checkpoint.HFName(t.Name, arch)
		if !ok {
			return nil, fmt.Errorf("%w: tensor %s has no MLX name", checkpoint.ErrUnsupported, t.Name)
		}
		if t.Format.Ternary {
			ts, spec, err := ternaryModule(t, hf, vh, rep, opt)
			if err != nil {
				return nil, err
			}
			specs[hf[:len(hf)-len(".weight")]] = spec
			tensors = append(tensors, ts...)
			continue
		}
		ft, err := floatTensor(t, hf, vh, rep, opt)
		if err != nil {
			return nil, err
		}
		tensors = append(tensors, ft)
	}
	cfg, err := mlxConfig(meta, arch, src.Tensor("output.weight") == nil, specs)
	if err != nil {
		return nil, err
	}
	if arch == "qwen35" {
		cfg["gdn_activation_layout"] = layout
	}
	var hadamardJSON map[string]any
	if decl != nil {
		signs, err := rotation(src, decl, arch, cfg)
		if err != nil {
			return nil, err
		}
		tensors = append(tensors, signs...)
		hadamardJSON = map[string]any{
			"version": decl.Version, "block_size": decl.BlockSize, "transform": decl.Transform,
			"axis": decl.Axis, "sign_mode": decl.SignMode, "gdn_v_grouped": decl.GDNVGrouped || layout == "grouped",
		}
	}
	return rep, writeFolder(dir, func(tmp string) error {
		w := safetensors.NewWriter()
		w.SetMetadata("format", "mlx")
		for _, t := range tensors {
			if err := w.AddFunc(t.name, t.dtype, t.shape, func(out io.Writer) error {
				b, err := t.data()
				if err != nil {
					return err
				}
				_, err = out.Write(b)
				return err
			}); err != nil {
				return err
			}
			rep.Tensors++
			n := t.dtype.Size()
			for _, d := range t.shape {
				n *= int(d)
			}
			rep.Bytes += int64(n)
		}
		if err := atomicfile.Write(filepath.Join(tmp, safetensors.SingleFile), func(f io.Writer) error {
			_, err := w.WriteTo(progressWriter(f, rep.Bytes, opt.Progress))
			return err
		}); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(tmp, "config.json"), cfg); err != nil {
			return err
		}
		if hadamardJSON != nil {
			if err := writeJSON(filepath.Join(tmp, checkpoint.HadamardFile), hadamardJSON); err != nil {
				return err
			}
		}
		return writeTokenizer(tmp, meta)
	})
}

// rotation describes a Hadamard-rotated model the way Bonsai 2 packs do:
// model_type prism_hadamard_qwen35, a modules list with each rotated
// module's block, and per module its K-wide .signs (F16 ±1).
func rotation(src model.Source, decl *hadamard.Declaration, arch string, cfg map[string]any) ([]mlxTensor, error) {
	if arch != "qwen35" {
		return nil, fmt.Errorf("%w: a Hadamard-rotated %s model", checkpoint.ErrUnsupported, arch)
	}
	var mods []checkpoint.PackModule
	var signs []mlxTensor
	add := func(name string, emb bool) error {
		t := src.Tensor(name)
		hf, ok := checkpoint.HFName(name, arch)
		if t == nil || !ok {
			return fmt.Errorf("convert: rotated tensor %s is not in the model", name)
		}
		path := hf[:len(hf)-len(".weight")]
		mods = append(mods, checkpoint.PackModule{Path: path, DType: "float16", Block: decl.BlockSize, Embedding: emb})
		if decl.SignMode != hadamard.SignExplicit {
			return nil
		}
		s, err := decl.Signs(int(t.Dims[0]))
		if err != nil {
			return err
		}
		b := make([]byte, 2*len(s))
		for i, x := range s {
			binary.LittleEndian.PutUint16(b[2*i:], half.FromFloat32(x))
		}
		signs = append(signs, mlxTensor{path + ".signs", safetensors.F16, []int64{int64(len(s))}, bytesOf(b)})
		return nil
	}
	for _, n := range decl.WeightNames {
		if err := add(n, false); err != nil {
			return nil, err
		}
	}
	for _, n := range decl.InverseWeightNames {
		if err := add(n, true); err != nil {
			return nil, err
		}
	}
	cfg["model_type"] = "prism_hadamard_qwen35"
	cfg["base_model_type"] = "qwen3_5"
	cfg["schema_version"] = 1
	cfg["modules"] = mods
	return signs, nil
}

// mlxSpec is one module's MLX quantization.
type mlxSpec struct {
	Group int `json:"group_size"`
	Bits  int `json:"bits"`
}

// ternaryModule splits a ternary GGUF matrix into MLX .weight (the code
// words), .scales and .biases, after bringing it to the layout of the
// MLX group and reordering value heads.
func ternaryModule(t *model.Tensor, hf string, vh *vheads, rep *Report, opt Options) ([]mlxTensor, mlxSpec, error) {
	if len(t.Dims) != 2 {
		return nil, mlxSpec{}, fmt.Errorf("convert: %s: ternary tensor of %d dims", t.Name, len(t.Dims))
	}
	rows, cols := t.Dims[1], t.Dims[0]
	inter := quant.PQ2_0
	spec := mlxSpec{Group: 128, Bits: 2}
	switch {
	case vh != nil && layerPart(t.Name) == "ssm_out.weight" && vh.dv%128 != 0 && (vh.keepOut == nil || !vh.keepOut.Rotated(t.Name)):
		// Value heads narrower than a group: groups of 64 keep them whole
		// (binary values too: they are ternary codes 0 and 2).
		inter, spec.Group = quant.Q2_0g64, 64
	case t.Format == quant.Q1_0:
		inter, spec = quant.Q1_0, mlxSpec{Group: 128, Bits: 1}
	case t.Format == quant.Q2_0g64:
		inter, spec.Group = quant.Q2_0g64, 64
	}
	if cols%int64(spec.Group) != 0 {
		return nil, spec, fmt.Errorf("convert: %s: %d columns are not whole groups of %d", t.Name, cols, spec.Group)
	}
	data := parts(3, func() ([][]byte, error) {
		data, err := t.Data()
		if err != nil {
			return nil, err
		}
		blocks, err := transcode(inter, t, data, rep, opt)
		if err != nil {
			return nil, err
		}
		if blocks, err = vh.reorder(t.Name, inter, t.Dims, blocks, true); err != nil {
			return nil, err
		}
		n := len(blocks) / inter.BlockBytes
		code := inter.BlockBytes - 2
		words := make([]byte, 0, n*code)
		scales := make([]byte, 2*n)
		biases := make([]byte, 2*n)
		for g := range n {
			blk := blocks[g*inter.BlockBytes : (g+1)*inter.BlockBytes]
			d := binary.LittleEndian.Uint16(blk)
			s, b := d, d^0x8000 // 2-bit: scale d, bias −d (a sign flip, exact)
			if spec.Bits == 1 {
				two := half.FromFloat32(2 * half.ToFloat32(d))
				if half.ToFloat32(two) != 2*half.ToFloat32(d) {
					return nil, fmt.Errorf("convert: %s: Q1_0 scale %g overflows fp16 when doubled", t.Name, half.ToFloat32(d))
				}
				s = two
			}
			binary.LittleEndian.PutUint16(scales[2*g:], s)
			binary.LittleEndian.PutUint16(biases[2*g:], b)
			words = append(words, blk[2:]...)
		}
		return [][]byte{words, scales, biases}, nil
	})
	module := hf[:len(hf)-len(".weight")]
	groups := cols / int64(spec.Group)
	return []mlxTensor{
		{module + ".weight", safetensors.U32, []int64{rows, cols * int64(spec.Bits) / 32}, data[0]},
		{module + ".scales", safetensors.F16, []int64{rows, groups}, data[1]},
		{module + ".biases", safetensors.F16, []int64{rows, groups}, data[2]},
	}, spec, nil
}

// transcode brings ternary data into layout dst, refusing (or with
// AllowLossy, requantizing and reporting) a change of values.
func transcode(dst *quant.Format, t *model.Tensor, data []byte, rep *Report, opt Options) ([]byte, error) {
	if t.Format == dst {
		return data, nil
	}
	out, err := quant.Transcode(dst, t.Format, data, int(t.Dims[0]))
	if err == nil {
		return out, nil
	}
	if !errors.Is(err, quant.ErrLossy) {
		return nil, fmt.Errorf("convert: %s: %w", t.Name, err)
	}
	if !opt.AllowLossy {
		return nil, fmt.Errorf("%w: %s: %v", ErrLossy, t.Name, err)
	}
	return requantize(dst, t, data, rep)
}

// requantize decodes data and encodes it in dst, recording how many
// values changed.
func requantize(dst *quant.Format, t *model.Tensor, data []byte, rep *Report) ([]byte, error) {
	v := make([]float32, t.Elems())
	if err := t.Format.Decode(v, data); err != nil {
		return nil, fmt.Errorf("convert: %s: %w", t.Name, err)
	}
	rb, err := dst.RowBytes(t.Dims[0])
	if err != nil {
		return nil, fmt.Errorf("convert: %s: %w", t.Name, err)
	}
	out := make([]byte, rb*(t.Elems()/t.Dims[0]))
	if err := dst.Encode(out, v); err != nil {
		return nil, fmt.Errorf("convert: %s: %w", t.Name, err)
	}
	back := make([]float32, len(v))
	if err := dst.Decode(back, out); err != nil {
		return nil, err
	}
	changed, groups := 0, 0
	for g := 0; g < len(v); g += dst.Group {
		c := 0
		for i := g; i < min(g+dst.Group, len(v)); i++ {
			if v[i] != back[i] && !(v[i] != v[i] && back[i] != back[i]) { // NaN stays NaN
				c++
			}
		}
		if c > 0 {
			changed += c
			groups++
		}
	}
	if changed > 0 {
		rep.Lossy = append(rep.Lossy, fmt.Sprintf("%s: %d of %d values in %d of %d groups of %d changed (%s → %s)",
			t.Name, changed, len(v), groups, (len(v)+dst.Group-1)/dst.Group, dst.Group, t.Format.Name, dst.Name))
	}
	return out, nil
}

// floatTensor carries a non-ternary tensor in its dtype (F32 for other
// quantized formats, which keeps their values), in HF shape and order.
func floatTensor(t *model.Tensor, hf string, vh *vheads, rep *Report, opt Options) (mlxTensor, error) {
	f := t.Format
	dt, ok := map[*quant.Format]safetensors.DType{quant.F32: safetensors.F32, quant.F16: safetensors.F16, quant.BF16: safetensors.BF16}[f]
	if !ok {
		f, dt = quant.F32, safetensors.F32
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s carried as F32 (values kept)", t.Name, t.Format.Name))
	}
	data := func() ([]byte, error) {
		b, err := t.Data()
		if err != nil {
			return nil, err
		}
		if f != t.Format {
			v, err := t.Floats()
			if err != nil {
				return nil, err
			}
			b = f32Bytes(v)
		}
		return vh.reorder(t.Name, f, t.Dims, b, true)
	}
	shape := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		shape[len(shape)-1-i] = d
	}
	switch layerPart(t.Name) {
	case "ssm_conv1d.weight":
		shape = []int64{t.Dims[1], t.Dims[0], 1} // MLX's [C, K, 1]
	case "ssm_a":
		// Small: converted now, as its dtype depends on the values.
		b, err := data()
		if err != nil {
			return mlxTensor{}, err
		}
		v := make([]float32, t.Elems())
		if err := f.Decode(v, b); err != nil {
			return mlxTensor{}, err
		}
		exact := true
		logs := make([]float32, len(v))
		for i, a := range v {
			x, ok := checkpoint.ALog(a)
			exact = exact && ok
			logs[i] = x
		}
		if exact {
			return mlxTensor{hf, safetensors.F32, shape, bytesOf(f32Bytes(logs))}, nil
		}
		// Some value has no float32 A_log: float64 ones all map back.
		b64 := make([]byte, 8*len(v))
		for i, a := range v {
			if !(a < 0) || math.IsInf(float64(a), 0) {
				return mlxTensor{}, fmt.Errorf("convert: %s[%d] = %g has no A_log (ssm_a must be negative and finite)", t.Name, i, a)
			}
			binary.LittleEndian.PutUint64(b64[8*i:], math.Float64bits(math.Log(-float64(a))))
		}
		rep.Notes = append(rep.Notes, t.Name+": A_log stored as F64 (no float32 maps back exactly)")
		return mlxTensor{hf, safetensors.F64, shape, bytesOf(b64)}, nil
	}
	return mlxTensor{hf, dt, shape, data}, nil
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// mlxConfig builds config.json from the GGUF hyperparameters.
func mlxConfig(meta *gguf.Metadata, arch string, tied bool, specs map[string]mlxSpec) (map[string]any, error) {
	u := func(k string) any {
		v, ok := meta.Uint(arch + "." + k)
		if !ok {
			return nil
		}
		return v
	}
	f := func(k string) any {
		v, ok := meta.Float(arch + "." + k)
		if !ok {
			return nil
		}
		return float64(float32(v))
	}
	text := map[string]any{
		"hidden_size":             u("embedding_length"),
		"num_hidden_layers":       u("block_count"),
		"intermediate_size":       u("feed_forward_length"),
		"num_attention_heads":     u("attention.head_count"),
		"num_key_value_heads":     u("attention.head_count_kv"),
		"head_dim":                u("attention.key_length"),
		"max_position_embeddings": u("context_length"),
		"rms_norm_eps":            f("attention.layer_norm_rms_epsilon"),
		"rope_theta":              f("rope.freq_base"),
		"tie_word_embeddings":     tied,
	}
	if n, ok := meta.Strings("tokenizer.ggml.tokens"); ok {
		text["vocab_size"] = len(n)
	}
	if typ, ok := meta.String(arch + ".rope.scaling.type"); ok && typ != "none" {
		rs := map[string]any{"rope_type": typ, "factor": f("rope.scaling.factor")}
		if o := u("rope.scaling.original_context_length"); o != nil {
			rs["original_max_position_embeddings"] = o
		}
		text["rope_scaling"] = rs
	}
	cfg := map[string]any{}
	switch arch {
	case "qwen3":
		cfg = text
		cfg["model_type"] = "qwen3"
		cfg["architectures"] = []string{"Qwen3ForCausalLM"}
	case "qwen35":
		text["model_type"] = "qwen3_5_text"
		text["linear_conv_kernel_dim"] = u("ssm.conv_kernel")
		text["linear_key_head_dim"] = u("ssm.state_size")
		text["linear_value_head_dim"] = u("ssm.state_size")
		text["linear_num_key_heads"] = u("ssm.group_count")
		text["linear_num_value_heads"] = u("ssm.time_step_rank")
		text["full_attention_interval"] = u("full_attention_interval")
		hd, _ := meta.Uint(arch + ".attention.key_length")
		rd, _ := meta.Uint(arch + ".rope.dimension_count")
		rp := map[string]any{"rope_type": "default", "rope_theta": text["rope_theta"]}
		if hd > 0 && rd > 0 {
			rp["partial_rotary_factor"] = float64(rd) / float64(hd)
		}
		if sec, ok := meta.Ints(arch + ".rope.dimension_sections"); ok && len(sec) >= 3 {
			rp["mrope_section"] = sec[:3]
		}
		text["rope_parameters"] = rp
		cfg = map[string]any{
			"model_type":            "qwen3_5",
			"architectures":         []string{"Qwen3_5ForConditionalGeneration"},
			"gdn_activation_layout": "grouped",
			"tie_word_embeddings":   tied,
			"text_config":           text,
		}
	}
	for k, v := range text {
		if v == nil {
			delete(text, k)
		}
	}
	if len(specs) > 0 {
		q := quantization(specs)
		cfg["quantization"] = q
		cfg["quantization_config"] = q
	}
	return cfg, nil
}

// quantization is config.json's "quantization": the most common spec as
// the default, the other modules as per-module overrides.
func quantization(specs map[string]mlxSpec) map[string]any {
	count := map[mlxSpec]int{}
	for _, s := range specs {
		count[s]++
	}
	var def mlxSpec
	for s, n := range count {
		if n > count[def] || (n == count[def] && s.Group > def.Group) {
			def = s
		}
	}
	q := map[string]any{"group_size": def.Group, "bits": def.Bits, "mode": "affine"}
	mods := make([]string, 0, len(specs))
	for m := range specs {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		if s := specs[m]; s != def {
			q[m] = map[string]any{"group_size": s.Group, "bits": s.Bits, "mode": "affine"}
		}
	}
	return q
}

// writeTokenizer writes tokenizer.json, tokenizer_config.json and
// generation_config.json from the tokenizer.ggml.* and general.sampling.*
// keys; a model without a tokenizer gets none.
func writeTokenizer(dir string, meta *gguf.Metadata) error {
	if _, ok := meta.String("tokenizer.ggml.model"); !ok {
		return nil
	}
	v, err := tokenizer.VocabFromMetadata(meta)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "tokenizer.json"), func(w io.Writer) error {
		return tokenizer.WriteHuggingFace(w, v)
	}); err != nil {
		return err
	}
	tc := map[string]any{"add_bos_token": v.AddBOS}
	for key, id := range map[string]int{"bos_token": v.BOS, "eos_token": v.EOS, "pad_token": v.PAD} {
		if id >= 0 {
			tc[key] = v.Tokens[id]
		}
	}
	if t, ok := meta.String("tokenizer.chat_template"); ok {
		tc["chat_template"] = t
	}
	if err := writeJSON(filepath.Join(dir, "tokenizer_config.json"), tc); err != nil {
		return err
	}
	gc := map[string]any{}
	if x, ok := meta.Float("general.sampling.temp"); ok {
		gc["temperature"] = float64(float32(x))
	}
	if x, ok := meta.Int("general.sampling.top_k"); ok {
		gc["top_k"] = x
	}
	if x, ok := meta.Float("general.sampling.top_p"); ok {
		gc["top_p"] = float64(float32(x))
	}
	if len(gc) == 0 {
		return nil
	}
	return writeJSON(filepath.Join(dir, "generation_config.json"), gc)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// writeFolder creates dir by filling a temporary sibling folder and
// renaming it, so the folder appears only when complete. dir must not
// exist.
func writeFolder(dir string, fill func(tmp string) error) (err error) {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("convert: %s already exists", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err = fill(tmp); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
