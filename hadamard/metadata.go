package hadamard

import (
	"fmt"
	"strings"
)

// KeyPrefix starts every GGUF metadata key of a rotation declaration.
const KeyPrefix = "prism.hadamard."

// The keys Parse reads, without KeyPrefix.
var keys = []string{
	"version", "block_size", "transform", "axis", "sign_mode", "sign_widths",
	"sign_values", "weight_names", "inverse_weight_names", "gdn_v_grouped",
}

// Metadata is the typed key lookup Parse needs; *gguf.File implements it.
// Each method reports false when the key is absent or of another type.
type Metadata interface {
	Uint(key string) (uint64, bool)
	String(key string) (string, bool)
	Bool(key string) (bool, bool)
	Ints(key string) ([]int64, bool)
	Strings(key string) ([]string, bool)
}

// KnownKey reports whether key is a declaration key Parse reads. A loader
// refuses a file carrying another key under KeyPrefix: it would be part of
// a declaration this package does not understand.
func KnownKey(key string) bool {
	name, ok := strings.CutPrefix(key, KeyPrefix)
	if !ok {
		return false
	}
	for _, k := range keys {
		if k == name {
			return true
		}
	}
	return false
}

// FromKeys is Parse for a container that can list its metadata keys (a
// GGUF file): it first refuses a key under KeyPrefix that Parse does not
// read, and a declaration whose keys are present but all of types Parse
// does not accept. Model loaders call it rather than Parse.
func FromKeys(m Metadata, keys []string) (*Declaration, error) {
	found := false
	for _, k := range keys {
		if strings.HasPrefix(k, KeyPrefix) {
			if !KnownKey(k) {
				return nil, fmt.Errorf("%w: unknown key %s", ErrInvalid, k)
			}
			found = true
		}
	}
	d, err := Parse(m)
	if err != nil {
		return nil, err
	}
	if found && d == nil {
		return nil, fmt.Errorf("%w: %s keys of unexpected types", ErrInvalid, KeyPrefix)
	}
	return d, nil
}

// Parse reads the `prism.hadamard.*` keys of m. It returns nil and no error
// when none is present (an unrotated model), and a validated Declaration
// otherwise. A key of the wrong type, a required key that is missing, or a
// declaration Validate refuses is an error wrapping ErrInvalid.
func Parse(m Metadata) (*Declaration, error) {
	if !present(m) {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	d := &Declaration{}
	var err error
	num := func(name string) int {
		v, ok := m.Uint(KeyPrefix + name)
		if !ok {
			if err == nil {
				err = bad("%s%s is missing or not a non-negative integer", KeyPrefix, name)
			}
			return 0
		}
		if v > MaxWidth {
			if err == nil {
				err = bad("%s%s = %d is out of range", KeyPrefix, name, v)
			}
			return 0
		}
		return int(v)
	}
	str := func(name string) string {
		v, ok := m.String(KeyPrefix + name)
		if !ok && err == nil {
			err = bad("%s%s is missing or not a string", KeyPrefix, name)
		}
		return v
	}
	d.Version = num("version")
	d.BlockSize = num("block_size")
	d.Transform = str("transform")
	d.Axis = str("axis")
	d.SignMode = str("sign_mode")
	if err != nil {
		return nil, err
	}
	if d.SignMode != SignExplicit && d.SignMode != SignIdentity {
		return nil, d.Validate()
	}
	if d.SignMode == SignExplicit {
		widths, ok := m.Ints(KeyPrefix + "sign_widths")
		if !ok {
			return nil, bad("%ssign_widths is missing or not an integer array", KeyPrefix)
		}
		for _, w := range widths {
			if w <= 0 || w > MaxWidth {
				return nil, bad("sign width %d out of range [1, %d]", w, MaxWidth)
			}
			d.SignWidths = append(d.SignWidths, int(w))
		}
		vals, ok := m.Ints(KeyPrefix + "sign_values")
		if !ok {
			return nil, bad("%ssign_values is missing or not an integer array", KeyPrefix)
		}
		d.SignValues = make([]int8, len(vals))
		for i, v := range vals {
			if v != 1 && v != -1 {
				return nil, bad("sign value %d at index %d is not ±1", v, i)
			}
			d.SignValues[i] = int8(v)
		}
	} else if has(m, "sign_widths") || has(m, "sign_values") {
		return nil, bad("sign mode %q with sign widths or values", d.SignMode)
	}
	names := func(name string) []string {
		if !has(m, name) {
			return nil
		}
		v, ok := m.Strings(KeyPrefix + name)
		if !ok && err == nil {
			err = bad("%s%s is not a string array", KeyPrefix, name)
		}
		return v
	}
	d.WeightNames = names("weight_names")
	d.InverseWeightNames = names("inverse_weight_names")
	if has(m, "gdn_v_grouped") {
		var ok bool
		if d.GDNVGrouped, ok = m.Bool(KeyPrefix + "gdn_v_grouped"); !ok && err == nil {
			err = bad("%sgdn_v_grouped is not a bool", KeyPrefix)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// has reports whether m holds key (KeyPrefix+name) with any type.
func has(m Metadata, name string) bool {
	k := KeyPrefix + name
	if _, ok := m.Uint(k); ok {
		return true
	}
	if _, ok := m.String(k); ok {
		return true
	}
	if _, ok := m.Bool(k); ok {
		return true
	}
	if _, ok := m.Ints(k); ok {
		return true
	}
	_, ok := m.Strings(k)
	return ok
}

func present(m Metadata) bool {
	for _, k := range keys {
		if has(m, k) {
			return true
		}
	}
	return false
}
