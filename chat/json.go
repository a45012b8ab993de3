package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ardanlabs/jinja"
)

// maxJSONDepth bounds the nesting of decoded JSON so that hostile input
// cannot exhaust the stack.
const maxJSONDepth = 256

var errJSONDepth = errors.New("chat: JSON nested too deeply")

// decodeJSON decodes one JSON value into a template value, keeping object
// keys in their written order (jinja.FromGoValue would sort them) and
// integers as integers.
func decodeJSON(data []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), errors.New("chat: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (jinja.Value, error) {
	if depth > maxJSONDepth {
		return jinja.Undefined(), errJSONDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("chat: bad JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := jinja.NewDict()
			d := v.AsDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), fmt.Errorf("chat: bad JSON: %w", err)
				}
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.Set(kt.(string), val) // the decoder only yields string keys here
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			var items []jinja.Value
			for dec.More() {
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, val)
			}
			_, err := dec.Token() // ']'
			return jinja.NewList(items), err
		}
	case json.Number, string, bool, nil:
		return jinja.FromGoValue(t), nil
	}
	return jinja.Undefined(), fmt.Errorf("chat: bad JSON token %v", tok)
}
