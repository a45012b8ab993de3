// Package schematest validates JSON texts against JSON Schemas for tests,
// with github.com/santhosh-tekuri/jsonschema/v6 (formats asserted). Only
// tests import it, so the validator stays a test-only dependency.
package schematest

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator compiles schema (failing t if it does not compile) and
// returns a function that reports why a JSON text does not validate.
func Validator(t testing.TB, schema string) func(instance string) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return func(instance string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
		if err != nil {
			return err
		}
		return sch.Validate(v)
	}
}
