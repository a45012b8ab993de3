package safetensors

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the reader: it must refuse or accept
// them without panicking, and every accepted tensor's data must lie inside
// the input and decode. The seed corpus in testdata/fuzz/FuzzRead holds
// the inputs that once mattered; f.Add seeds a valid file and its mutations.
func FuzzRead(f *testing.F) {
	f.Add([]byte(golden))
	f.Add(file(`{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"U32","shape":[1],"data_offsets":[8,12]}}`, 12))
	f.Add(file(`{"__metadata__":{"k":"v"}}`, 0))
	f.Fuzz(func(t *testing.T, img []byte) {
		r, err := NewReader(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		for _, tn := range r.Tensors {
			d, err := tn.Data()
			if err != nil {
				t.Fatalf("%s: accepted header but Data fails: %v", tn.Name, err)
			}
			if int64(len(d)) != tn.Size() || tn.Size() != tn.Elems()*int64(tn.DType.Size()) {
				t.Fatalf("%s: %d bytes for %d elems of %s", tn.Name, len(d), tn.Elems(), tn.DType)
			}
			if tn.DType.Float() && tn.Elems() < 1<<16 {
				if _, err := tn.Floats(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
