package bench

import (
	"path/filepath"
	"testing"

	"trit/quant"
	"trit/vision"
)

// TestVisionSynthetic: a synthetic tower loads, keeps its matrices in the
// asked format (F16 where rows do not fill the blocks) and encodes.
func TestVisionSynthetic(t *testing.T) {
	s := &VisionShape{Name: "tiny", Blocks: 2, Hidden: 64, Heads: 2, FFN: 80, Patch: 16, Side: 4, Out: 48}
	for _, f := range []*quant.Format{quant.Q8_0, quant.BF16} {
		path := filepath.Join(t.TempDir(), "mmproj.gguf")
		if err := WriteVisionSyntheticFile(path, s, f, 1); err != nil {
			t.Fatal(err)
		}
		tw, err := vision.Load(path, vision.Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		r, err := RunVision(tw, 64, 1)
		tw.Close()
		if err != nil {
			t.Fatal(err)
		}
		// 64² at merged patch 32: 2×2 tokens; 16 patches.
		if r.Tokens != 4 || len(r.Times) != 1 || !(r.GOP > r.MatrixGOP) || r.MatrixGOP <= 0 || r.KernelTime <= 0 {
			t.Errorf("%s: %+v", f.Name, r)
		}
		// 2 blocks × 16 patches × 2·(64·192 + 64·64 + 2·64·80) + 4 rows × 2·(256·256 + 256·48)
		want := 2*16*2*(64*192+64*64+2*64*80) + 4*2*(256*256+256*48)
		if got := r.MatrixGOP * 1e9; int(got+0.5) != want {
			t.Errorf("%s: matrix ops %.0f, want %d", f.Name, got, want)
		}
	}
	if VisionShapeByName("bonsai2-9b-vision") == nil || VisionShapeByName("nope") != nil {
		t.Error("VisionShapeByName")
	}
}
