package convert

import (
	"fmt"
	"os"

	"trit/tokenizer"
)

// Llama2CFile converts the llama2.c checkpoint at modelPath with the
// tokenizer at tokPath into the GGUF file outPath (written to a temporary
// file and renamed, so a failure leaves nothing half-written).
func Llama2CFile(modelPath, tokPath, outPath string) error {
	mf, err := os.Open(modelPath)
	if err != nil {
		return err
	}
	defer mf.Close()
	st, err := mf.Stat()
	if err != nil {
		return err
	}
	m, err := ReadLlama2C(mf, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	tf, err := os.Open(tokPath)
	if err != nil {
		return err
	}
	defer tf.Close()
	v, err := tokenizer.LoadLlama2C(tf, m.Config.Vocab)
	if err != nil {
		return fmt.Errorf("%s: %w", tokPath, err)
	}
	w, err := Llama2CGGUF(m, v)
	if err != nil {
		return err
	}
	return w.WriteFile(outPath)
}
