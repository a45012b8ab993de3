package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// A SchemaError is a JSON Schema that cannot be turned into a grammar: a
// keyword outside the supported set, or a supported one used in a way the
// grammar cannot express. Keyword names it; Path is the JSON pointer of the
// schema holding it.
type SchemaError struct {
	Path    string
	Keyword string
	Msg     string
}

func (e *SchemaError) Error() string {
	if e.Keyword == "" {
		return fmt.Sprintf("grammar: JSON schema at %s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("grammar: JSON schema at %s: keyword %q: %s", e.Path, e.Keyword, e.Msg)
}

// annotations are keywords that do not constrain values.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true, "title": true, "description": true,
	"default": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
	"$defs": true, "definitions": true, "strict": true,
}

// unsupported are the validation keywords of JSON Schema (2020-12 and
// drafts 4–7) that the converter does not implement: a schema using one is
// refused rather than left unconstrained.
var unsupported = map[string]bool{
	"not": true, "allOf": true, "if": true, "then": true, "else": true, "dependentRequired": true,
	"dependentSchemas": true, "dependencies": true, "patternProperties": true, "propertyNames": true,
	"minProperties": true, "maxProperties": true, "uniqueItems": true, "contains": true,
	"minContains": true, "maxContains": true, "prefixItems": true, "additionalItems": true,
	"multipleOf": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"$dynamicRef": true, "$recursiveRef": true, "contentEncoding": true, "contentMediaType": true,
	"contentSchema": true,
}

// JSON primitives, in GBNF. Whitespace is bounded (one newline and some
// indentation per gap) so the model cannot idle inside the grammar;
// \u escapes exclude surrogates so that every escape is one character.
const jsonPrimitives = `ws ::= ( " " | "\n" [ \t]{0,20} )?
char ::= [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" ( [0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} ) )
string ::= "\"" char* "\""
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* ws )? "}"
array ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
`

// JSONObject is the grammar of a JSON object (response_format
// "json_object"): any object, nested as deep as the recognizer allows,
// after optional whitespace.
func JSONObject() *Grammar {
	g, err := Parse("root ::= ws object\n" + jsonPrimitives)
	if err != nil {
		panic(err) // a constant grammar
	}
	return g
}

// FromJSONSchema compiles a JSON Schema into the grammar of the compact-ish
// JSON texts that validate against it. Supported: type (and type arrays),
// properties, required, additionalProperties, enum, const, anyOf, oneOf
// (when no value can match two branches: distinct types, distinct
// constants, or objects told apart by a required constant property),
// items, minItems,
// maxItems, $ref to "#..." pointers with $defs/definitions, minLength,
// maxLength, pattern (a common regular-expression subset), format
// date/time/date-time/uuid, and minimum/maximum (exclusive ones too) on
// integers, integer-valued minimum/maximum on numbers. Properties are
// written in schema order. Anything else gives a *SchemaError naming the
// keyword.
func FromJSONSchema(schema []byte) (*Grammar, error) {
	doc, err := decodeOrdered(schema)
	if err != nil {
		return nil, err
	}
	c := newSchemaConv()
	c.doc = doc
	root, err := c.visit(doc, "#")
	if err != nil {
		return nil, err
	}
	return c.compile(root)
}

// A Tool is a function the model may call: its name and the JSON Schema
// of its arguments (empty: any object).
type Tool struct {
	Name       string
	Parameters []byte
}

// ToolCall returns the grammar of tool calls in the Hermes format of Qwen
// models,
//
//	<tool_call>
//	{"name": "NAME", "arguments": ARGS}
//	</tool_call>
//
// where NAME is one of tools and ARGS validates against its parameters:
// one call, or with calls > 1 up to that many, one per line. With open
// false the grammar starts after the first "<tool_call>" tag, for
// constraining a call the model has opened itself.
func ToolCall(tools []Tool, open bool, calls int) (*Grammar, error) {
	if len(tools) == 0 {
		return nil, errors.New("grammar: no tools")
	}
	c := newSchemaConv()
	var alts []string
	for i, t := range tools {
		args := "object"
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			doc, err := decodeOrdered(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Name, err)
			}
			c.doc, c.refScope = doc, fmt.Sprintf("tool%d", i)
			if args, err = c.visit(doc, "#"); err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Name, err)
			}
		}
		alts = append(alts, `"{" ws "\"name\"" ws ":" ws `+literalOf(t.Name)+` ws "," ws "\"arguments\"" ws ":" ws `+args+` ws "}"`)
	}
	body := c.rule("call", strings.Join(alts, " | "))
	call := `"\n"? ` + body + ` "\n"? "</tool_call>"`
	root := call
	if open {
		root = `"<tool_call>" ` + call
	}
	if calls > 1 {
		root += fmt.Sprintf(` ( "\n" "<tool_call>" %s ){0,%d}`, call, min(calls, maxCount)-1)
	}
	return c.compile(root)
}

func newSchemaConv() *schemaConv {
	return &schemaConv{byBody: map[string]string{}, byRef: map[string]string{}, names: map[string]bool{}}
}

// compile assembles the rules with root as the start.
func (c *schemaConv) compile(root string) (*Grammar, error) {
	var src strings.Builder
	src.WriteString("root ::= " + root + "\n")
	for _, r := range c.rules {
		src.WriteString(r)
	}
	src.WriteString(jsonPrimitives)
	g, err := Parse(src.String())
	if err != nil {
		return nil, fmt.Errorf("grammar: the schema's grammar does not compile: %w", err)
	}
	return g, nil
}

type schemaConv struct {
	doc      any
	refScope string            // distinguishes the $refs of different documents
	rules    []string          // "name ::= body\n"
	byBody   map[string]string // body → rule name, to share equal rules
	byRef    map[string]string // $ref → rule name
	names    map[string]bool
	depth    int
}

func (c *schemaConv) name(hint string) string {
	var b strings.Builder
	for _, r := range hint {
		if r < 0x80 && isWordChar(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" || len(base) > 40 {
		base = "s"
	}
	base = "s-" + base
	n := base
	for i := 1; c.names[n] || jsonPrimitiveNames[n]; i++ {
		n = base + "-" + strconv.Itoa(i)
	}
	c.names[n] = true
	return n
}

var jsonPrimitiveNames = map[string]bool{"ws": true, "char": true, "string": true, "integer": true, "number": true,
	"boolean": true, "null": true, "value": true, "object": true, "array": true, "root": true}

// rule returns a rule name for body, sharing equal bodies.
func (c *schemaConv) rule(hint, body string) string {
	if n, ok := c.byBody[body]; ok {
		return n
	}
	n := c.name(hint)
	c.byBody[body] = n
	c.rules = append(c.rules, n+" ::= "+body+"\n")
	return n
}

func (c *schemaConv) errf(path, kw, format string, args ...any) error {
	return &SchemaError{Path: path, Keyword: kw, Msg: fmt.Sprintf(format, args...)}
}

// visit returns a GBNF expression (a rule name or a primitive) for the
// values valid under schema s at path.
func (c *schemaConv) visit(s any, path string) (string, error) {
	if c.depth++; c.depth > maxSchemaDepth {
		return "", c.errf(path, "", "schema nested deeper than %d", maxSchemaDepth)
	}
	defer func() { c.depth-- }()
	switch s := s.(type) {
	case bool:
		if s {
			return "value", nil
		}
		return "", c.errf(path, "", "the schema false admits no value")
	case *jobject:
		return c.object(s, path)
	}
	return "", c.errf(path, "", "a schema must be an object or a boolean")
}

func (c *schemaConv) object(s *jobject, path string) (string, error) {
	for _, k := range s.keys {
		if unsupported[k] {
			return "", c.errf(path, k, "is not supported")
		}
	}
	if defs, ok := s.get("$defs"); ok {
		if _, ok := defs.(*jobject); !ok {
			return "", c.errf(path, "$defs", "must be an object")
		}
	}
	validation := func(except ...string) []string {
		var kws []string
		for _, k := range s.keys {
			if !annotations[k] && !slices.Contains(except, k) {
				kws = append(kws, k)
			}
		}
		return kws
	}
	if r, ok := s.get("$ref"); ok {
		if extra := validation("$ref"); len(extra) > 0 {
			return "", c.errf(path, extra[0], "alongside $ref is not supported")
		}
		ref, ok := r.(string)
		if !ok {
			return "", c.errf(path, "$ref", "must be a string")
		}
		return c.ref(ref, path)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		v, ok := s.get(kw)
		if !ok {
			continue
		}
		if extra := validation(kw); len(extra) > 0 {
			return "", c.errf(path, extra[0], "alongside %s is not supported", kw)
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return "", c.errf(path, kw, "must be a non-empty array of schemas")
		}
		var alts []string
		for i, sub := range list {
			e, err := c.visit(sub, fmt.Sprintf("%s/%s/%d", path, kw, i))
			if err != nil {
				return "", err
			}
			alts = append(alts, e)
		}
		if kw == "oneOf" {
			if err := c.disjoint(list, path); err != nil {
				return "", err
			}
		}
		return c.rule(path+"-"+kw, strings.Join(alts, " | ")), nil
	}
	for _, kw := range []string{"const", "enum"} {
		v, ok := s.get(kw)
		if !ok {
			continue
		}
		if extra := validation(kw, "type"); len(extra) > 0 {
			return "", c.errf(path, extra[0], "alongside %s is not supported", kw)
		}
		list := []any{v}
		if kw == "enum" {
			if list, ok = v.([]any); !ok || len(list) == 0 {
				return "", c.errf(path, "enum", "must be a non-empty array")
			}
		}
		types := []string{"object", "array", "string", "number", "boolean", "null"}
		if _, typed := s.get("type"); typed {
			var err error
			if types, err = c.types(s, path); err != nil {
				return "", err
			}
		}
		var alts []string
		for _, x := range list {
			if t := typeOf(x); slices.Contains(types, t) || t == "integer" && slices.Contains(types, "number") {
				alts = append(alts, literalOf(x))
			}
		}
		if len(alts) == 0 {
			return "", c.errf(path, kw, "no value is of the schema's type")
		}
		return c.rule(path+"-"+kw, strings.Join(alts, " | ")), nil
	}
	types, err := c.types(s, path)
	if err != nil {
		return "", err
	}
	var alts []string
	for _, t := range types {
		var e string
		switch t {
		case "string":
			e, err = c.str(s, path)
		case "integer", "number":
			e, err = c.num(s, path, t == "integer")
		case "boolean", "null":
			e = t
		case "object":
			e, err = c.obj(s, path)
		case "array":
			e, err = c.arr(s, path)
		default:
			return "", c.errf(path, "type", "unknown type %q", t)
		}
		if err != nil {
			return "", err
		}
		alts = append(alts, e)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return c.rule(path+"-types", strings.Join(alts, " | ")), nil
}

// types returns the types a schema admits: its "type", or those implied
// by its keywords, or all of them.
func (c *schemaConv) types(s *jobject, path string) ([]string, error) {
	v, ok := s.get("type")
	if !ok {
		var implied []string
		has := func(kws ...string) bool {
			return slices.ContainsFunc(kws, func(k string) bool { _, ok := s.get(k); return ok })
		}
		if has("properties", "required", "additionalProperties") {
			implied = append(implied, "object")
		}
		if has("items", "minItems", "maxItems") {
			implied = append(implied, "array")
		}
		if has("minLength", "maxLength", "pattern", "format") {
			implied = append(implied, "string")
		}
		if has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") {
			implied = append(implied, "number")
		}
		if len(implied) == 0 {
			implied = []string{"object", "array", "string", "number", "boolean", "null"}
		}
		return implied, nil
	}
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, x := range v {
			t, ok := x.(string)
			if !ok {
				return nil, c.errf(path, "type", "must be a string or an array of strings")
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, c.errf(path, "type", "must be a string or a non-empty array of strings")
}

// ref resolves a local JSON pointer; each target becomes one rule, so
// recursive schemas give recursive grammars.
func (c *schemaConv) ref(ref, path string) (string, error) {
	if n, ok := c.byRef[c.refScope+ref]; ok {
		return n, nil
	}
	if !strings.HasPrefix(ref, "#") {
		return "", c.errf(path, "$ref", "only local references (#...) are supported, not %q", ref)
	}
	target, ok := c.resolve(ref)
	if !ok {
		return "", c.errf(path, "$ref", "%q points to nothing", ref)
	}
	n := c.name(ref)
	c.byRef[c.refScope+ref] = n
	body, err := c.visit(target, ref)
	if err != nil {
		return "", err
	}
	c.rules = append(c.rules, n+" ::= "+body+"\n")
	return n, nil
}

// literalOf returns a GBNF literal of the compact JSON encoding of v.
func literalOf(v any) string {
	var buf bytes.Buffer
	encodeValue(&buf, v)
	return quote(buf.String())
}

// quote writes s as a GBNF string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, "\\x%02X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxCount bounds minItems/maxItems/minLength/maxLength, which the grammar
// spells out as repetitions.
const maxCount = 1000

func (c *schemaConv) count(s *jobject, path, kw string) (int, bool, error) {
	v, ok := s.get(kw)
	if !ok {
		return 0, false, nil
	}
	n, ok := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if !ok || err != nil || i < 0 {
		return 0, false, c.errf(path, kw, "must be a non-negative integer")
	}
	if i > maxCount {
		return 0, false, c.errf(path, kw, "%d is above the supported %d", i, maxCount)
	}
	return i, true, nil
}

// repeat returns GBNF for lo to hi copies of item separated by sep
// (hi < 0: no limit), possibly empty when lo == 0.
func repeatSep(item, sep string, lo, hi int) string {
	if hi == 0 {
		return `""`
	}
	first := item
	rest := "( " + sep + " " + item + " )"
	var tail string
	switch {
	case hi < 0:
		tail = fmt.Sprintf("%s{%d,}", rest, max(lo-1, 0))
	default:
		tail = fmt.Sprintf("%s{%d,%d}", rest, max(lo-1, 0), hi-1)
	}
	seq := first + " " + tail
	if lo == 0 {
		return "( " + seq + " )?"
	}
	return seq
}

func (c *schemaConv) str(s *jobject, path string) (string, error) {
	lo, _, err := c.count(s, path, "minLength")
	if err != nil {
		return "", err
	}
	hi, hasHi, err := c.count(s, path, "maxLength")
	if err != nil {
		return "", err
	}
	if !hasHi {
		hi = -1
	} else if hi < lo {
		return "", c.errf(path, "maxLength", "is below minLength")
	}
	if f, ok := s.get("format"); ok {
		if _, ok := s.get("pattern"); ok {
			return "", c.errf(path, "format", "together with pattern is not supported")
		}
		name, _ := f.(string)
		body, ok := formats[name]
		if !ok {
			return "", c.errf(path, "format", "format %q is not supported (date, time, date-time, uuid)", f)
		}
		if lo > 0 || hasHi {
			return "", c.errf(path, "minLength", "together with format is not supported")
		}
		return c.rule("format-"+name, `"\"" `+body+` "\""`), nil
	}
	if p, ok := s.get("pattern"); ok {
		ps, ok := p.(string)
		if !ok {
			return "", c.errf(path, "pattern", "must be a string")
		}
		if lo > 0 || hasHi {
			return "", c.errf(path, "minLength", "together with pattern is not supported")
		}
		e, err := patternGBNF(ps)
		if err != nil {
			return "", c.errf(path, "pattern", "%v", err)
		}
		return c.rule(path+"-pattern", `"\"" `+e+` "\""`), nil
	}
	if lo == 0 && hi < 0 {
		return "string", nil
	}
	rep := fmt.Sprintf("char{%d,}", lo)
	if hi >= 0 {
		rep = fmt.Sprintf("char{%d,%d}", lo, hi)
	}
	return c.rule(path+"-string", `"\"" `+rep+` "\""`), nil
}

// formats are the string formats the grammar spells out, as RFC 3339 and
// RFC 4122 write them. Dates stop at the 28th of February, so that every
// generated date exists without a leap-year rule, and seconds stop at 59.
var formats = map[string]string{
	"date":      dateGBNF,
	"time":      timeGBNF,
	"date-time": dateGBNF + ` "T" ` + timeGBNF,
	"uuid":      `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`,
}

const (
	dateGBNF = `[0-9]{4} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) )`
	timeGBNF = `( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )`
)

func (c *schemaConv) obj(s *jobject, path string) (string, error) {
	var props *jobject
	if v, ok := s.get("properties"); ok {
		if props, ok = v.(*jobject); !ok {
			return "", c.errf(path, "properties", "must be an object")
		}
	}
	var required []string
	if v, ok := s.get("required"); ok {
		list, ok := v.([]any)
		if !ok {
			return "", c.errf(path, "required", "must be an array of strings")
		}
		for _, x := range list {
			k, ok := x.(string)
			if !ok {
				return "", c.errf(path, "required", "must be an array of strings")
			}
			required = append(required, k)
		}
	}
	var extra any = true // additionalProperties
	if v, ok := s.get("additionalProperties"); ok {
		extra = v
	}
	type prop struct {
		name string
		expr string
		req  bool
	}
	var list []prop
	if props != nil {
		for _, k := range props.keys {
			e, err := c.visit(props.vals[k], path+"/properties/"+k)
			if err != nil {
				return "", err
			}
			list = append(list, prop{k, e, slices.Contains(required, k)})
		}
	}
	for _, k := range required {
		if _, ok := props.get(k); ok {
			continue
		}
		if extra == false {
			return "", c.errf(path, "required", "%q is neither in properties nor allowed by additionalProperties", k)
		}
		e, err := c.visit(extra, path+"/additionalProperties")
		if err != nil {
			return "", err
		}
		list = append(list, prop{k, e, true})
	}
	if len(list) == 0 {
		// No named properties: an empty object, or a map.
		if extra == false {
			return `"{" ws "}"`, nil
		}
		e, err := c.visit(extra, path+"/additionalProperties")
		if err != nil {
			return "", err
		}
		kv := "string ws \":\" ws " + e
		return c.rule(path+"-map", `"{" ws ( `+kv+` ( ws "," ws `+kv+` )* ws )? "}"`), nil
	}
	// Named properties only (extra ones are optional, so leaving them out
	// is always valid). first[i] is the rest of the object from property i
	// when none has been written yet; later ones come with a comma.
	kv := make([]string, len(list))
	for i, p := range list {
		kv[i] = literalOf(p.name) + ` ws ":" ws ` + p.expr
	}
	rest := func(i int) string { // properties i… after at least one
		var b strings.Builder
		for j := i; j < len(list); j++ {
			item := `ws "," ws ` + kv[j]
			if list[j].req {
				b.WriteString(" " + item)
			} else {
				b.WriteString(" ( " + item + " )?")
			}
		}
		return b.String()
	}
	next := `""`
	for i := len(list) - 1; i >= 0; i-- {
		body := kv[i] + rest(i+1)
		if !list[i].req {
			body = "( " + body + " ) | " + next
		}
		next = c.rule(fmt.Sprintf("%s-from-%d", path, i), body)
	}
	return c.rule(path+"-object", `"{" ws `+next+` ws "}"`), nil
}

func (c *schemaConv) arr(s *jobject, path string) (string, error) {
	item := "value"
	if v, ok := s.get("items"); ok {
		if _, isList := v.([]any); isList {
			return "", c.errf(path, "items", "an array of schemas (tuple form) is not supported")
		}
		e, err := c.visit(v, path+"/items")
		if err != nil {
			return "", err
		}
		item = e
	}
	lo, _, err := c.count(s, path, "minItems")
	if err != nil {
		return "", err
	}
	hi, hasHi, err := c.count(s, path, "maxItems")
	if err != nil {
		return "", err
	}
	if !hasHi {
		hi = -1
	} else if hi < lo {
		return "", c.errf(path, "maxItems", "is below minItems")
	}
	return c.rule(path+"-array", `"[" ws `+repeatSep(item, `ws "," ws`, lo, hi)+` ws "]"`), nil
}

// intDigits is the most digits an integer without bounds gets (as in the
// integer primitive): the bounds default to ±(10^16 - 1).
const intDigits = 16

var intLimit = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(intDigits), nil), big.NewInt(1))

func (c *schemaConv) num(s *jobject, path string, integer bool) (string, error) {
	bound := func(kw string) (*big.Rat, bool, error) {
		v, ok := s.get(kw)
		if !ok {
			return nil, false, nil
		}
		n, isNum := v.(json.Number)
		r, okr := new(big.Rat).SetString(string(n))
		if !isNum || !okr {
			return nil, false, c.errf(path, kw, "must be a number")
		}
		return r, true, nil
	}
	lo, hi := new(big.Int).Neg(intLimit), new(big.Int).Set(intLimit)
	bounded := false
	for _, b := range []struct {
		kw         string
		lower, exc bool
	}{{"minimum", true, false}, {"exclusiveMinimum", true, true}, {"maximum", false, false}, {"exclusiveMaximum", false, true}} {
		r, ok, err := bound(b.kw)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		bounded = true
		if !integer && (b.exc || !r.IsInt()) {
			return "", c.errf(path, b.kw, "on a number only integer-valued minimum and maximum are supported")
		}
		var v *big.Int
		if b.lower {
			v = ceilRat(r)
			if b.exc && r.IsInt() {
				v.Add(v, big.NewInt(1))
			}
			if v.Cmp(lo) > 0 {
				lo = v
			}
		} else {
			v = floorRat(r)
			if b.exc && r.IsInt() {
				v.Sub(v, big.NewInt(1))
			}
			if v.Cmp(hi) < 0 {
				hi = v
			}
		}
	}
	if !bounded {
		if integer {
			return "integer", nil
		}
		return "number", nil
	}
	if lo.Cmp(hi) > 0 {
		return "", c.errf(path, "minimum", "the range admits no value within ±(10^%d-1)", intDigits)
	}
	if integer {
		return c.rule(path+"-int", intRange(lo, hi)), nil
	}
	return c.rule(path+"-num", numRange(lo, hi)), nil
}

func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func floorRat(r *big.Rat) *big.Int {
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int)) // Euclidean: floor for positive divisors
	return q
}

// intRange returns GBNF for the decimal integers lo..hi (no leading zeros).
func intRange(lo, hi *big.Int) string {
	var alts []string
	zero := new(big.Int)
	if lo.Sign() < 0 { // -(max(1,-hi) .. -lo)
		a := new(big.Int).Neg(hi)
		if a.Cmp(big.NewInt(1)) < 0 {
			a.SetInt64(1)
		}
		b := new(big.Int).Neg(lo)
		alts = append(alts, `"-" ( `+natRange(a.String(), b.String())+` )`)
	}
	if hi.Sign() >= 0 {
		a := lo
		if a.Sign() < 0 {
			a = zero
		}
		alts = append(alts, natRange(a.String(), hi.String()))
	}
	return strings.Join(alts, " | ")
}

// numRange returns GBNF for decimal numbers (an optional fraction, no
// exponent) between the integers lo and hi.
func numRange(lo, hi *big.Int) string {
	frac := `( "." [0-9]{1,16} )?`
	zeros := `( "." "0"{1,16} )?`
	// part is the magnitudes a..b: integer part a..b-1 with any fraction,
	// or b with a zero one.
	part := func(a, b *big.Int) string {
		var alts []string
		if a.Cmp(b) < 0 {
			bm := new(big.Int).Sub(b, big.NewInt(1))
			alts = append(alts, "( "+natRange(a.String(), bm.String())+" ) "+frac)
		}
		alts = append(alts, quote(b.String())+" "+zeros)
		return strings.Join(alts, " | ")
	}
	var alts []string
	if lo.Sign() < 0 {
		a := new(big.Int).Neg(hi)
		if a.Sign() < 0 {
			a.SetInt64(0)
		}
		alts = append(alts, `"-" ( `+part(a, new(big.Int).Neg(lo))+` )`)
	}
	if hi.Sign() >= 0 {
		a := lo
		if a.Sign() < 0 {
			a = new(big.Int)
		}
		alts = append(alts, part(a, hi))
	}
	return strings.Join(alts, " | ")
}

// natRange returns GBNF for the decimal naturals a..b (a <= b, canonical).
func natRange(a, b string) string {
	var alts []string
	for n := len(a); n <= len(b); n++ {
		lo, hi := a, b
		if n > len(a) {
			lo = "1" + strings.Repeat("0", n-1)
		}
		if n < len(b) {
			hi = strings.Repeat("9", n)
		}
		alts = append(alts, digitRange(lo, hi))
	}
	return strings.Join(alts, " | ")
}

// digitRange returns GBNF for the digit strings of one length between lo
// and hi.
func digitRange(lo, hi string) string {
	n := len(lo)
	switch {
	case n == 0:
		return `""`
	case lo == hi:
		return quote(lo)
	case n == 1:
		return fmt.Sprintf("[%c-%c]", lo[0], hi[0])
	case strings.Trim(lo, "0") == "" && strings.Trim(hi, "9") == "":
		return fmt.Sprintf("[0-9]{%d}", n)
	case lo[0] == hi[0]:
		return quote(lo[:1]) + " ( " + digitRange(lo[1:], hi[1:]) + " )"
	}
	var alts []string
	alts = append(alts, quote(lo[:1])+" ( "+digitRange(lo[1:], strings.Repeat("9", n-1))+" )")
	if hi[0]-lo[0] > 1 {
		alts = append(alts, fmt.Sprintf("[%c-%c] [0-9]{%d}", lo[0]+1, hi[0]-1, n-1))
	}
	alts = append(alts, quote(hi[:1])+" ( "+digitRange(strings.Repeat("0", n-1), hi[1:])+" )")
	return strings.Join(alts, " | ")
}

// A shape is what a branch of oneOf can be, for telling branches apart:
// the JSON types it admits, or (literal) exactly the values in lits.
type shape struct {
	types   map[string]bool
	literal bool
	lits    map[string]bool // compact encodings
	obj     *jobject        // the branch, when it is an object schema
}

// shapeOf describes schema s, following local $refs (depth bounds cycles).
func (c *schemaConv) shapeOf(s any, depth int) shape {
	all := shape{types: map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}}
	o, ok := s.(*jobject)
	if !ok || depth > 8 {
		return all
	}
	if r, ok := o.get("$ref"); ok {
		if ref, ok := r.(string); ok {
			if t, ok := c.resolve(ref); ok {
				return c.shapeOf(t, depth+1)
			}
		}
		return all
	}
	lits := func(vals ...any) shape {
		sh := shape{types: map[string]bool{}, literal: true, lits: map[string]bool{}}
		for _, v := range vals {
			var buf bytes.Buffer
			encodeValue(&buf, v)
			sh.lits[buf.String()] = true
		}
		return sh
	}
	if v, ok := o.get("const"); ok {
		return lits(v)
	}
	if v, ok := o.get("enum"); ok {
		if list, ok := v.([]any); ok {
			return lits(list...)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if v, ok := o.get(kw); ok {
			u := shape{types: map[string]bool{}}
			list, _ := v.([]any)
			for _, b := range list {
				sh := c.shapeOf(b, depth+1)
				if sh.literal {
					return all
				}
				for t := range sh.types {
					u.types[t] = true
				}
			}
			return u
		}
	}
	types, err := c.types(o, "")
	if err != nil {
		return all
	}
	sh := shape{types: map[string]bool{}, obj: o}
	for _, t := range types {
		sh.types[t] = true
		if t == "number" {
			sh.types["integer"] = true
		}
	}
	return sh
}

// resolve returns the schema a local $ref points to.
func (c *schemaConv) resolve(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	target := c.doc
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return target, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch t := target.(type) {
		case *jobject:
			v, ok := t.get(tok)
			if !ok {
				return nil, false
			}
			target = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			target = t[i]
		default:
			return nil, false
		}
	}
	return target, true
}

// disjoint checks that no value can match two branches of a oneOf, so
// that the union the grammar generates is exact.
func (c *schemaConv) disjoint(list []any, path string) error {
	shapes := make([]shape, len(list))
	for i, b := range list {
		shapes[i] = c.shapeOf(b, 0)
	}
	for i := range shapes {
		for j := i + 1; j < len(shapes); j++ {
			if !c.apart(shapes[i], shapes[j]) {
				return c.errf(path, "oneOf", "branches %d and %d may match the same value; only branches with distinct types, distinct constants, or a required property with distinct constants are supported (anyOf is)", i, j)
			}
		}
	}
	return nil
}

func (c *schemaConv) apart(a, b shape) bool {
	switch {
	case a.literal && b.literal:
		for k := range a.lits {
			if b.lits[k] {
				return false
			}
		}
		return true
	case a.literal || b.literal:
		return false // a literal may have a type the other admits
	}
	var common []string
	for t := range a.types {
		if b.types[t] {
			common = append(common, t)
		}
	}
	switch {
	case len(common) == 0:
		return true
	case len(common) == 1 && common[0] == "object" && a.obj != nil && b.obj != nil:
		return c.discriminated(a.obj, b.obj)
	}
	return false
}

// discriminated reports whether objects a and b share a required property
// whose constant values differ.
func (c *schemaConv) discriminated(a, b *jobject) bool {
	req := func(o *jobject) map[string]bool {
		m := map[string]bool{}
		if v, ok := o.get("required"); ok {
			list, _ := v.([]any)
			for _, x := range list {
				if k, ok := x.(string); ok {
					m[k] = true
				}
			}
		}
		return m
	}
	prop := func(o *jobject, k string) shape {
		props, _ := o.get("properties")
		p, _ := props.(*jobject)
		v, ok := p.get(k)
		if !ok {
			return shape{}
		}
		return c.shapeOf(v, 0)
	}
	ra, rb := req(a), req(b)
	for k := range ra {
		if !rb[k] {
			continue
		}
		pa, pb := prop(a, k), prop(b, k)
		if pa.literal && pb.literal && c.apart(pa, pb) {
			return true
		}
	}
	return false
}

// typeOf returns the JSON Schema type of a decoded value ("integer" for
// integral numbers).
func typeOf(v any) string {
	switch v := v.(type) {
	case *jobject:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return "null"
}
