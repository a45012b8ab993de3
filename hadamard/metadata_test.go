package hadamard_test

import (
	"errors"
	"fmt"
	"testing"

	"trit/hadamard"
)

// meta is a Metadata over a map, as a GGUF reader would present the keys.
type meta map[string]any

func (m meta) Uint(k string) (uint64, bool) {
	switch v := m[k].(type) {
	case uint64:
		return v, true
	case int:
		if v >= 0 {
			return uint64(v), true
		}
	}
	return 0, false
}
func (m meta) String(k string) (string, bool) { v, ok := m[k].(string); return v, ok }
func (m meta) Bool(k string) (bool, bool)     { v, ok := m[k].(bool); return v, ok }
func (m meta) Ints(k string) ([]int64, bool)  { v, ok := m[k].([]int64); return v, ok }
func (m meta) Strings(k string) ([]string, bool) {
	v, ok := m[k].([]string)
	return v, ok
}

func good() meta {
	p := hadamard.KeyPrefix
	return meta{
		p + "version":              1,
		p + "block_size":           4,
		p + "transform":            hadamard.Transform,
		p + "axis":                 hadamard.Axis,
		p + "sign_mode":            hadamard.SignExplicit,
		p + "sign_widths":          []int64{4, 8},
		p + "sign_values":          []int64{1, -1, -1, 1, 1, 1, 1, 1, -1, -1, -1, -1},
		p + "weight_names":         []string{"blk.0.ffn_up.weight"},
		p + "inverse_weight_names": []string{"token_embd.weight"},
		p + "gdn_v_grouped":        true,
	}
}

func TestParse(t *testing.T) {
	d, err := hadamard.Parse(good())
	if err != nil {
		t.Fatal(err)
	}
	if d.BlockSize != 4 || len(d.SignWidths) != 2 || d.SignValues[1] != -1 || !d.GDNVGrouped ||
		!d.Rotated("blk.0.ffn_up.weight") || !d.InverseRotated("token_embd.weight") || d.Rotated("token_embd.weight") {
		t.Errorf("parsed %+v", d)
	}
	if d, err := hadamard.Parse(meta{"general.name": "x"}); d != nil || err != nil {
		t.Errorf("no keys: %v, %v; want nil, nil", d, err)
	}
	p := hadamard.KeyPrefix
	cases := []struct {
		name string
		edit func(m meta)
	}{
		{"version missing", func(m meta) { delete(m, p+"version") }},
		{"version string", func(m meta) { m[p+"version"] = "1" }},
		{"version huge", func(m meta) { m[p+"version"] = uint64(1) << 40 }},
		{"block 3", func(m meta) { m[p+"block_size"] = 3 }},
		{"transform missing", func(m meta) { delete(m, p+"transform") }},
		{"axis", func(m meta) { m[p+"axis"] = "rows" }},
		{"sign mode", func(m meta) { m[p+"sign_mode"] = "learned" }},
		{"widths missing", func(m meta) { delete(m, p+"sign_widths") }},
		{"widths negative", func(m meta) { m[p+"sign_widths"] = []int64{-4, 16} }},
		{"values missing", func(m meta) { delete(m, p+"sign_values") }},
		{"value 3", func(m meta) { m[p+"sign_values"].([]int64)[0] = 3 }},
		{"identity with widths", func(m meta) { m[p+"sign_mode"] = hadamard.SignIdentity }},
		{"names not strings", func(m meta) { m[p+"weight_names"] = []int64{1} }},
		{"grouped not bool", func(m meta) { m[p+"gdn_v_grouped"] = 1 }},
		{"no names", func(m meta) { delete(m, p+"weight_names"); delete(m, p+"inverse_weight_names") }},
	}
	for _, tc := range cases {
		m := good()
		tc.edit(m)
		if _, err := hadamard.Parse(m); !errors.Is(err, hadamard.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestFromKeys(t *testing.T) {
	m := good()
	keys := func(m meta) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		return append(k, "general.name")
	}
	if d, err := hadamard.FromKeys(m, keys(m)); err != nil || d == nil {
		t.Fatalf("FromKeys(good) = %v, %v", d, err)
	}
	if d, err := hadamard.FromKeys(meta{}, []string{"general.name"}); d != nil || err != nil {
		t.Errorf("no keys: %v, %v; want nil, nil", d, err)
	}
	m[hadamard.KeyPrefix+"seed"] = 7
	if _, err := hadamard.FromKeys(m, keys(m)); !errors.Is(err, hadamard.ErrInvalid) {
		t.Errorf("unknown key: %v", err)
	}
	odd := meta{hadamard.KeyPrefix + "version": 1.5}
	if _, err := hadamard.FromKeys(odd, keys(odd)); !errors.Is(err, hadamard.ErrInvalid) {
		t.Errorf("keys of unexpected types: %v", err)
	}
}

func TestKnownKey(t *testing.T) {
	for key, want := range map[string]bool{
		"prism.hadamard.version":       true,
		"prism.hadamard.gdn_v_grouped": true,
		"prism.hadamard.seed":          false,
		"general.version":              false,
		"version":                      false,
	} {
		if got := hadamard.KnownKey(key); got != want {
			t.Errorf("KnownKey(%q) = %v", key, got)
		}
	}
}

// FuzzParse feeds arbitrary values to Parse: it must return a declaration
// that validates, or an error, and never panic.
func FuzzParse(f *testing.F) {
	f.Add(uint64(1), uint64(4), hadamard.Transform, hadamard.Axis, hadamard.SignExplicit, []byte{4, 1, 0, 0, 1}, "w")
	f.Add(uint64(1), uint64(64), hadamard.Transform, hadamard.Axis, hadamard.SignIdentity, []byte{}, "w")
	f.Fuzz(func(t *testing.T, version, block uint64, transform, axis, mode string, signs []byte, name string) {
		p := hadamard.KeyPrefix
		m := meta{
			p + "version": version, p + "block_size": block, p + "transform": transform,
			p + "axis": axis, p + "sign_mode": mode, p + "weight_names": []string{name},
		}
		if len(signs) > 0 {
			m[p+"sign_widths"] = []int64{int64(signs[0])}
			vals := make([]int64, len(signs)-1)
			for i, b := range signs[1:] {
				vals[i] = int64(b&1)*2 - 1
			}
			m[p+"sign_values"] = vals
		}
		d, err := hadamard.Parse(m)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("Parse returned a declaration that does not validate: %v", err)
		}
		if d.SignMode == hadamard.SignExplicit {
			if _, err := d.Signs(d.SignWidths[0]); err != nil {
				t.Fatalf("Signs of a declared width: %v", err)
			}
		}
	})
}

// Example rotates the activations feeding a folded weight and restores a
// rotated embedding row.
func Example() {
	d := &hadamard.Declaration{
		Version: 1, BlockSize: 4, Transform: hadamard.Transform, Axis: hadamard.Axis,
		SignMode: hadamard.SignExplicit, SignWidths: []int{4}, SignValues: []int8{1, -1, 1, -1},
		WeightNames: []string{"blk.0.ffn_up.weight"}, InverseWeightNames: []string{"token_embd.weight"},
	}
	r, err := hadamard.New(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Prepare(4); err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{1, 2, 3, 4}
	r.Forward(x, 4) // x′ = H·(s ⊙ x), what W′ = W·Rᵀ expects
	fmt.Println(x)
	r.Inverse(x, 4) // back to x
	fmt.Println(x)
	// Output:
	// [-1 5 0 -2]
	// [1 2 3 4]
}
