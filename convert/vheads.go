package convert

import (
	"fmt"
	"strings"

	"trit/gguf"
	"trit/hadamard"
	"trit/quant"
)

// vheads describes the Gated DeltaNet value heads of a qwen35 model, whose
// order differs between GGUF (tiled: head i·Hk+g) and HF/MLX (grouped:
// head g·r+i, r = Hv/Hk).
type vheads struct {
	hk, hv, dk, dv int
	// keepOut, if set, is a rotation declaration with gdn_v_grouped: the
	// rotated ssm_out matrices it lists keep grouped input columns in
	// GGUF too, so they are not reordered.
	keepOut *hadamard.Declaration
}

func vheadsOf(meta *gguf.Metadata, arch string) (*vheads, error) {
	if arch != "qwen35" {
		return nil, nil
	}
	get := func(k string) int {
		v, _ := meta.Uint(arch + "." + k)
		return int(v)
	}
	v := &vheads{hk: get("ssm.group_count"), hv: get("ssm.time_step_rank"), dk: get("ssm.state_size")}
	v.dv = v.dk
	if v.hk <= 0 || v.hv <= 0 || v.dk <= 0 || v.hv%v.hk != 0 {
		return nil, fmt.Errorf("convert: bad Gated DeltaNet heads: %d key, %d value, dim %d", v.hk, v.hv, v.dk)
	}
	if v.hk == v.hv {
		return nil, nil // one order
	}
	return v, nil
}

// perm returns, for each head position in the destination order, the
// head it comes from: toGrouped maps tiled → grouped, else grouped → tiled.
func (v *vheads) perm(toGrouped bool) []int {
	r := v.hv / v.hk
	p := make([]int, v.hv)
	for g := range v.hk {
		for i := range r {
			grouped, tiled := g*r+i, i*v.hk+g
			if toGrouped {
				p[grouped] = tiled
			} else {
				p[tiled] = grouped
			}
		}
	}
	return p
}

// reorder permutes the value heads of the GGUF-named tensor (data in
// format f, dims in GGUF order) and reports whether it had any. Rows are
// whole byte ranges in every format; ssm_out's heads are column chunks of
// dv elements, which must be whole blocks of f.
func (v *vheads) reorder(name string, f *quant.Format, dims []int64, data []byte, toGrouped bool) ([]byte, error) {
	if v == nil {
		return data, nil
	}
	base := layerPart(name)
	vd := v.hv * v.dv
	rowBytes := func() int {
		rb, _ := f.RowBytes(dims[0])
		return int(rb)
	}
	switch base {
	case "attn_qkv.weight":
		return permuteRows(data, rowBytes(), 2*v.hk*v.dk, v.dv, v.perm(toGrouped)), nil
	case "ssm_conv1d.weight":
		return permuteRows(data, rowBytes(), 2*v.hk*v.dk, v.dv, v.perm(toGrouped)), nil
	case "attn_gate.weight":
		return permuteRows(data, rowBytes(), 0, v.dv, v.perm(toGrouped)), nil
	case "ssm_beta.weight", "ssm_alpha.weight":
		return permuteRows(data, rowBytes(), 0, 1, v.perm(toGrouped)), nil
	case "ssm_a", "ssm_dt.bias":
		return permuteRows(data, f.BlockBytes, 0, 1, v.perm(toGrouped)), nil
	case "ssm_out.weight":
		if v.keepOut != nil && v.keepOut.Rotated(name) {
			return data, nil
		}
		if int(dims[0]) != vd || v.dv%f.BlockElems != 0 {
			return nil, fmt.Errorf("convert: %s: value heads of %d columns are not whole %s blocks of %d", name, v.dv, f.Name, f.BlockElems)
		}
		chunk := v.dv / f.BlockElems * f.BlockBytes
		rb := rowBytes()
		out := make([]byte, len(data))
		p := v.perm(toGrouped)
		for r := 0; r < len(data)/rb; r++ {
			src, dst := data[r*rb:(r+1)*rb], out[r*rb:(r+1)*rb]
			for h, from := range p {
				copy(dst[h*chunk:(h+1)*chunk], src[from*chunk:(from+1)*chunk])
			}
		}
		return out, nil
	}
	return data, nil
}

// permuteRows returns data (rows of rowBytes) with the len(p) heads of
// per rows that start at row first put in order p; other rows unchanged.
func permuteRows(data []byte, rowBytes, first, per int, p []int) []byte {
	out := append([]byte(nil), data...)
	hb := per * rowBytes
	base := first * rowBytes
	for h, from := range p {
		copy(out[base+h*hb:base+(h+1)*hb], data[base+from*hb:base+(from+1)*hb])
	}
	return out
}

// layerPart is the name after "blk.N.", or the whole name.
func layerPart(name string) string {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return name
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		return rest[i+1:]
	}
	return name
}
