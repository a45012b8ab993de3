package tokenizer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// maxLlama2CTokenLen bounds the max_token_length header of a llama2.c
// tokenizer file, so a corrupt header cannot size an allocation.
const maxLlama2CTokenLen = 1 << 16

// LoadLlama2C reads a llama2.c tokenizer file (tokenizer.bin, tok512.bin)
// holding vocabSize tokens and returns the equivalent llama Vocab.
//
// The file is a little-endian int32 max_token_length followed, for each
// token, by a float32 score, an int32 byte length and the bytes. By
// llama2.c's convention ids 0, 1 and 2 are <unk>, <s> and </s>, and
// "<0xXX>" tokens are bytes. llama2.c keeps real spaces in token text
// where SentencePiece writes "▁"; LoadLlama2C converts them, so that the
// Vocab follows GGUF's convention. The vocabulary adds BOS and a dummy
// space prefix, as llama2.c's encoder does.
func LoadLlama2C(r io.Reader, vocabSize int) (*Vocab, error) {
	if vocabSize < 3 {
		return nil, fmt.Errorf("tokenizer: llama2.c vocabulary size %d, need at least 3", vocabSize)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: llama2.c header: %w", ErrFormat, noEOF(err))
	}
	maxLen := int32(binary.LittleEndian.Uint32(hdr[:]))
	if maxLen <= 0 || maxLen > maxLlama2CTokenLen {
		return nil, fmt.Errorf("%w: llama2.c max_token_length %d", ErrFormat, maxLen)
	}
	// Grow with the data rather than trusting vocabSize for the capacity.
	capacity := min(vocabSize, 1<<16)
	v := &Vocab{
		Model:          ModelLlama,
		Tokens:         make([]string, 0, capacity),
		Scores:         make([]float32, 0, capacity),
		Types:          make([]int32, 0, capacity),
		BOS:            1,
		EOS:            2,
		PAD:            -1,
		UNK:            0,
		AddBOS:         true,
		AddSpacePrefix: true,
	}
	buf := make([]byte, maxLen)
	for id := range vocabSize {
		var rec [8]byte
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			return nil, fmt.Errorf("%w: llama2.c token %d: %w", ErrFormat, id, noEOF(err))
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(rec[:4]))
		n := int32(binary.LittleEndian.Uint32(rec[4:]))
		if n < 0 || n > maxLen {
			return nil, fmt.Errorf("%w: llama2.c token %d has length %d (max %d)", ErrFormat, id, n, maxLen)
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return nil, fmt.Errorf("%w: llama2.c token %d: %w", ErrFormat, id, noEOF(err))
		}
		text := string(buf[:n])
		typ := int32(TypeNormal)
		switch _, isByte := parseByteToken(text); {
		case id == 0:
			typ = TypeUnknown
		case id <= 2:
			typ = TypeControl
		case isByte:
			typ = TypeByte
		default:
			text = strings.ReplaceAll(text, " ", "▁")
		}
		v.Tokens = append(v.Tokens, text)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	return v, nil
}

// noEOF turns a clean end of file inside a structure into ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
