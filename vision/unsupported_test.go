package vision

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"trit/gguf"
	"trit/internal/testdata"
)

// TestOtherTowersRefused: towers of other families (SiLU activations,
// Qwen3-VL's deepstack layers) are refused with ErrUnsupported naming
// what the file has, never run as a Qwen3.5 tower.
func TestOtherTowersRefused(t *testing.T) {
	src := filepath.Join(testdata.Path(t, "reference-vision"), "mmproj-qwen35v-f32.gguf")
	for _, tc := range []struct {
		key  string
		v    gguf.Value
		want string
	}{
		{"clip.use_gelu", gguf.Bool(false), "SiLU"},
		{"clip.vision.is_deepstack_layers", gguf.Array([]bool{false, true}), "deepstack"},
	} {
		dst := filepath.Join(t.TempDir(), "mmproj.gguf")
		rewriteTower(t, src, dst, nil, map[string]gguf.Value{tc.key: tc.v})
		tw, err := Load(dst, Options{Threads: 1})
		if err == nil {
			tw.Close()
		}
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrUnsupported naming %s", tc.key, err, tc.want)
		}
	}
}
