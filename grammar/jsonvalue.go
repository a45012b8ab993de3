package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// A jobject is a decoded JSON object that keeps its keys in document
// order: a schema's "properties" are generated in the order written.
type jobject struct {
	keys []string
	vals map[string]any
}

func (o *jobject) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// maxSchemaDepth bounds the nesting of a schema document.
const maxSchemaDepth = 128

// decodeOrdered decodes JSON into nil, bool, json.Number, string, []any
// and *jobject values.
func decodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("grammar: trailing data after the schema")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("grammar: schema nested deeper than %d", maxSchemaDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("grammar: schema is not valid JSON: %w", err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jobject{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("grammar: schema is not valid JSON: %w", err)
				}
				k := kt.(string)
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
	}
	return t, nil
}

// encodeValue writes v as compact JSON, keys in document order.
func encodeValue(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case *jobject:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeString(buf, k)
			buf.WriteByte(':')
			encodeValue(buf, v.vals[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeValue(buf, x)
		}
		buf.WriteByte(']')
	case string:
		encodeString(buf, v)
	case json.Number:
		buf.WriteString(string(v))
	case bool:
		fmt.Fprint(buf, v)
	case nil:
		buf.WriteString("null")
	}
}

func encodeString(buf *bytes.Buffer, s string) {
	e := json.NewEncoder(buf)
	e.SetEscapeHTML(false)
	e.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
