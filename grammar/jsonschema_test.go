package grammar

import (
	"errors"
	"strings"
	"testing"
)

func TestFromJSONSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		accept       []string
		reject       []string
	}{
		{"issue example", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`,
			[]string{`{"a":1}`, `{ "a" : -42 }`}, []string{`{"a":"1"}`, `{}`, `{"a":1.5}`, `{"b":1}`, `{"a":1,"b":2}`}},
		{"optional order", `{"properties":{"x":{"type":"boolean"},"y":{"type":"null"},"z":{"const":3}},"required":["y"]}`,
			[]string{`{"y":null}`, `{"x":true,"y":null}`, `{"y":null,"z":3}`, `{"x":false,"y":null,"z":3}`},
			[]string{`{"x":true}`, `{"y":null,"x":true}`, `{"y":null,}`, `{,"y":null}`, `{"x":true,"y":null,"z":4}`}},
		{"all optional", `{"type":"object","properties":{"a":{"type":"string","maxLength":2},"b":{"type":"integer"}},"additionalProperties":false}`,
			[]string{`{}`, `{"a":"hi"}`, `{"b":0}`, `{"a":"","b":7}`}, []string{`{"a":"abc"}`, `{"b":0,"a":""}`}},
		{"map", `{"type":"object","additionalProperties":{"type":"integer"}}`,
			[]string{`{}`, `{"k":1,"j":2}`}, []string{`{"k":"v"}`}},
		{"enum", `{"enum":["red","green",3,null,{"a":[1]}]}`,
			[]string{`"red"`, `3`, `null`, `{"a":[1]}`}, []string{`"blue"`, `"Red"`, `4`}},
		{"type array", `{"type":["string","null"],"maxLength":1}`,
			[]string{`null`, `"a"`, `""`}, []string{`"ab"`, `1`}},
		{"anyOf", `{"anyOf":[{"type":"integer","minimum":1},{"type":"string","minLength":1,"maxLength":3}]}`,
			[]string{`5`, `"abc"`}, []string{`0`, `""`, `"abcd"`}},
		{"array bounds", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`,
			[]string{`[1]`, `[1, 2,3]`}, []string{`[]`, `[1,2,3,4]`, `[1,]`, `["a"]`}},
		{"array any", `{"type":"array"}`, []string{`[]`, `[1,"a",{"b":[null]}]`}, []string{`[`, `{}`}},
		{"ref", `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},"$ref":"#/$defs/node"}`,
			[]string{`{"v":1,"next":null}`, `{"v":1,"next":{"v":2,"next":null}}`}, []string{`{"v":1}`, `{"v":1,"next":{"v":2}}`}},
		{"int range", `{"type":"integer","minimum":-15,"maximum":123}`,
			[]string{`-15`, `-9`, `0`, `7`, `99`, `100`, `123`}, []string{`-16`, `124`, `200`, `-0`, `007`, `1000`}},
		{"exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}`,
			[]string{`1`, `9`}, []string{`0`, `10`}},
		{"number range", `{"type":"number","minimum":-2,"maximum":3}`,
			[]string{`-2`, `-1.5`, `0`, `2.999`, `3`, `3.00`, `-0.5`}, []string{`-2.5`, `3.1`, `4`, `1e2`}},
		{"format date", `{"type":"string","format":"date"}`,
			[]string{`"2024-01-31"`, `"1999-02-28"`, `"2000-11-30"`}, []string{`"2024-02-30"`, `"2024-13-01"`, `"2024-04-31"`, `"24-01-01"`}},
		{"format date-time", `{"type":"string","format":"date-time"}`,
			[]string{`"2024-01-31T23:59:59Z"`, `"2024-01-31T00:00:00.123+05:30"`}, []string{`"2024-01-31T24:00:00Z"`, `"2024-01-31 10:00:00Z"`}},
		{"format uuid", `{"format":"uuid"}`,
			[]string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
		{"pattern", `{"type":"string","pattern":"^[A-Z]{2}-\\d{3}(x|yz)?$"}`,
			[]string{`"AB-123"`, `"QQ-000yz"`}, []string{`"AB-12"`, `"ab-123"`, `"AB-123y"`}},
		{"pattern unanchored", `{"type":"string","pattern":"ab+"}`,
			[]string{`"ab"`, `"xxabbby"`}, []string{`"a"`, `"ba"`}},
		{"escapes", `{"type":"string","maxLength":2}`,
			[]string{`"\n\""`, `"\u00e9"`, `"é日"`}, []string{`"abc"`, `"\ud800"`, "\"\x01\""}},
		{"true", `true`, []string{`1`, `"x"`, `[{}]`}, []string{`x`}},
		{"typed enum", `{"type":["string","number"],"enum":["a",1,2.5,null,true]}`, []string{`"a"`, `1`, `2.5`}, []string{`null`, `true`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := FromJSONSchema([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.accept {
				if !g.Match(s) {
					t.Errorf("rejects %s", s)
				}
			}
			for _, s := range tt.reject {
				if g.Match(s) {
					t.Errorf("accepts %s", s)
				}
			}
		})
	}
}

func TestFromJSONSchemaErrors(t *testing.T) {
	tests := []struct {
		schema, keyword string
	}{
		{`{"type":"object","not":{}}`, "not"},
		{`{"properties":{"a":{"type":"string","format":"email"}}}`, "format"},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems"},
		{`{"type":"number","minimum":0.5}`, "minimum"},
		{`{"type":"number","exclusiveMaximum":1}`, "exclusiveMaximum"},
		{`{"$ref":"http://example.com/s.json"}`, "$ref"},
		{`{"$ref":"#/$defs/missing"}`, "$ref"},
		{`{"type":"strin"}`, "type"},
		{`{"type":"string","pattern":"(?=a)"}`, "pattern"},
		{`{"type":"string","pattern":"a\\1"}`, "pattern"},
		{`{"type":"array","maxItems":100000}`, "maxItems"},
		{`{"allOf":[{"type":"string"}]}`, "allOf"},
		{`{"type":"integer","minimum":5,"maximum":1}`, "minimum"},
		{`{"type":"object","required":["a"],"additionalProperties":false}`, "required"},
		{`{"anyOf":[{"type":"string"}],"type":"string"}`, "type"},
		{`{"enum":["abc"],"maxLength":2}`, "maxLength"},
		{`{"type":"integer","const":"x"}`, "const"},
	}
	for _, tt := range tests {
		_, err := FromJSONSchema([]byte(tt.schema))
		var se *SchemaError
		if !errors.As(err, &se) || se.Keyword != tt.keyword || !strings.Contains(err.Error(), `"`+tt.keyword+`"`) {
			t.Errorf("FromJSONSchema(%s) = %v, want a SchemaError naming %q", tt.schema, err, tt.keyword)
		}
	}
	for _, bad := range []string{``, `{`, `[1]`, `{"a":1} x`, strings.Repeat("[", 200) + strings.Repeat("]", 200)} {
		if _, err := FromJSONSchema([]byte(bad)); err == nil {
			t.Errorf("FromJSONSchema(%q) = nil error", bad)
		}
	}
}

func TestJSONObject(t *testing.T) {
	g := JSONObject()
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}],"c":"d"}`, "{\n  \"x\": -1.5e3\n}"} {
		if !g.Match(s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{`[]`, `"a"`, `{"a":1}x`, `{"a":01}`, `{"a" 1}`} {
		if g.Match(s) {
			t.Errorf("accepts %s", s)
		}
	}
}

func TestToolCall(t *testing.T) {
	tools := []Tool{
		{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["C","F"]}},"required":["city"]}`)},
		{Name: "now"},
		{Name: "tree", Parameters: []byte(`{"$defs":{"n":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}}}},"$ref":"#/$defs/n"}`)},
	}
	g, err := ToolCall(tools, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		`<tool_call>{"name":"get_weather","arguments":{"city":"x","unit":"F"}}</tool_call>`,
		`<tool_call>{"name":"now","arguments":{"any":[1]}}</tool_call>`,
		`<tool_call>{"name":"tree","arguments":{"k":[{},{"k":[]}]}}</tool_call>`,
	} {
		if !g.Match(s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{
		`<tool_call>{"name":"get_weather","arguments":{}}</tool_call>`,
		`<tool_call>{"name":"get_weather","arguments":{"city":"x","unit":"K"}}</tool_call>`,
		`<tool_call>{"name":"other","arguments":{}}</tool_call>`,
		`<tool_call>{"name":"now","arguments":[]}</tool_call>`,
		`{"name":"now","arguments":{}}</tool_call>`,
	} {
		if g.Match(s) {
			t.Errorf("accepts %s", s)
		}
	}
	opened, err := ToolCall(tools[1:2], false, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !opened.Match("\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>") {
		t.Error("the grammar after an opened tag rejects a call")
	}
	two, err := ToolCall(tools[1:2], true, 2)
	if err != nil {
		t.Fatal(err)
	}
	one := `<tool_call>{"name":"now","arguments":{}}</tool_call>`
	if !two.Match(one) || !two.Match(one+"\n"+one) || two.Match(one+"\n"+one+"\n"+one) || g.Match(one+"\n"+one) {
		t.Error("the number of calls is not bounded as asked")
	}
	if _, err := ToolCall([]Tool{{Name: "f", Parameters: []byte(`{"type":"object","not":{}}`)}}, true, 1); err == nil || !strings.Contains(err.Error(), `"not"`) {
		t.Errorf("unsupported keyword in a tool: %v", err)
	}
}

func TestOneOf(t *testing.T) {
	for _, ok := range []string{
		`{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`,
		`{"oneOf":[{"const":1},{"enum":[2,"x"]}]}`,
		`{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"n":{"type":"integer"}},"required":["kind"]},{"type":"object","properties":{"kind":{"enum":["b","c"]}},"required":["kind","x"]}]}`,
		`{"$defs":{"s":{"type":"string"}},"oneOf":[{"$ref":"#/$defs/s"},{"type":"array"}]}`,
	} {
		if _, err := FromJSONSchema([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, overlap := range []string{
		`{"oneOf":[{"type":"integer"},{"type":"number"}]}`,
		`{"oneOf":[{"type":"string"},{"const":"x"}]}`,
		`{"oneOf":[{"enum":[1,2]},{"const":2}]}`,
		`{"oneOf":[{"type":"object"},{"type":"object","properties":{"a":{"const":1}}}]}`,
		`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]}]}`,
		`{"oneOf":[{},{"type":"null"}]}`,
	} {
		_, err := FromJSONSchema([]byte(overlap))
		var se *SchemaError
		if !errors.As(err, &se) || se.Keyword != "oneOf" {
			t.Errorf("%s: %v, want a oneOf SchemaError", overlap, err)
		}
	}
}
