package convert

import (
	"fmt"
	"io"

	"trit/gguf"
	"trit/hadamard"
	"trit/internal/atomicfile"
	"trit/model"
	"trit/quant"
)

// ToGGUF writes the model src (an MLX pack or HF checkpoint opened by
// package checkpoint, or any source) as the GGUF file out. Ternary
// matrices, and with a ternary typ also float matrices, are stored in typ
// (nil: ternary tensors keep the layout the source gives them, floats
// stay floats); a float typ (F32, F16, BF16) converts float matrices.
// Value heads go back to GGUF's tiled order. A conversion that changes a
// value is refused unless opt.AllowLossy; the Report says what changed.
func ToGGUF(src model.Source, out string, typ *quant.Format, opt Options) (*Report, error) {
	meta := src.Meta()
	arch, _ := meta.String("general.architecture")
	var vh *vheads
	if src.Layout().GroupedVHeads {
		var err error
		if vh, err = vheadsOf(meta, arch); err != nil {
			return nil, err
		}
		decl, err := hadamard.FromKeys(meta, meta.Keys())
		if err != nil {
			return nil, err
		}
		if vh != nil && decl != nil && decl.GDNVGrouped {
			vh.keepOut = decl // rotated ssm_out stays grouped: the keys say so
		}
	}
	if typ != nil && !typ.Ternary && typ != quant.F32 && typ != quant.F16 && typ != quant.BF16 {
		return nil, fmt.Errorf("convert: output type %s (known: the ternary layouts, F32, F16, BF16)", typ.Name)
	}
	w := gguf.NewWriter()
	for _, kv := range meta.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	rep := &Report{}
	for _, t := range src.Tensors() {
		dst := outFormat(t, typ)
		size, err := dst.RowBytes(t.Dims[0])
		if err != nil {
			return nil, fmt.Errorf("convert: %s: %w", t.Name, err)
		}
		size *= t.Elems() / t.Dims[0]
		// The data is made while the file is written: one tensor at a time.
		if err := w.AddTensorFunc(t.Name, dst, t.Dims, func(out io.Writer) error {
			data, err := t.Data()
			if err != nil {
				return err
			}
			// Reorder in the source's layout, whose blocks match the MLX groups.
			if data, err = vh.reorder(t.Name, t.Format, t.Dims, data, false); err != nil {
				return err
			}
			if dst != t.Format {
				if data, err = convertData(dst, t, data, rep, opt); err != nil {
					return err
				}
			}
			_, err = out.Write(data)
			return err
		}); err != nil {
			return nil, err
		}
		rep.Tensors++
		rep.Bytes += size
	}
	return rep, atomicfile.Write(out, func(f io.Writer) error {
		_, err := w.WriteTo(progressWriter(f, rep.Bytes, opt.Progress))
		return err
	})
}

// outFormat is the layout tensor t gets: typ for ternary tensors and
// float matrices (not the convolution), else its own.
func outFormat(t *model.Tensor, typ *quant.Format) *quant.Format {
	if typ == nil || len(t.Dims) != 2 || layerPart(t.Name) == "ssm_conv1d.weight" {
		return t.Format
	}
	if t.Format.Ternary || t.Format == quant.F32 || t.Format == quant.F16 || t.Format == quant.BF16 {
		if t.Dims[0]%int64(typ.BlockElems) != 0 {
			return t.Format // rows that typ cannot hold stay as they are
		}
		return typ
	}
	return t.Format
}

// convertData stores data (in t.Format) in dst: ternary to ternary by
// transcoding, anything else by encoding the decoded values, checking
// that every value survives.
func convertData(dst *quant.Format, t *model.Tensor, data []byte, rep *Report, opt Options) ([]byte, error) {
	if t.Format.Ternary && dst.Ternary {
		return transcode(dst, t, data, rep, opt)
	}
	r := &Report{}
	out, err := requantize(dst, t, data, r)
	if err != nil {
		return nil, err
	}
	if len(r.Lossy) > 0 {
		if !opt.AllowLossy {
			return nil, fmt.Errorf("%w: %s", ErrLossy, r.Lossy[0])
		}
		rep.Lossy = append(rep.Lossy, r.Lossy...)
	}
	return out, nil
}
