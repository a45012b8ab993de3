package grammar_test

import (
	"fmt"

	"trit/grammar"
)

func ExampleParse() {
	g, err := grammar.Parse(`root ::= "move " [a-h] [1-8] ("=" [QRBN])?`)
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Match("move e8=Q"), g.Match("move i9"), g.MatchPrefix("move e"))
	// Output: true false true
}

func ExampleFromJSONSchema() {
	g, err := grammar.FromJSONSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Match(`{"a": 42}`), g.Match(`{"a": "42"}`))
	_, err = grammar.FromJSONSchema([]byte(`{"type":"array","uniqueItems":true}`))
	fmt.Println(err)
	// Output:
	// true false
	// grammar: JSON schema at #: keyword "uniqueItems": is not supported
}

// A Constraint masks, before each token, what the grammar cannot take.
func ExampleConstraint() {
	pieces := []string{"yes", "no", "y", "es", "maybe", ""}
	eos := 5
	v := grammar.NewVocab(pieces, []int{eos})
	g, _ := grammar.Parse(`root ::= "yes" | "no"`)
	c, _ := g.NewConstraint(v, grammar.Options{})
	logits := make([]float32, len(pieces))
	c.Mask(logits)
	fmt.Println(logits)
	c.Accept(2) // "y"
	fmt.Println(c.Done())
	c.Accept(3) // "es"
	fmt.Println(c.Done())
	// Output:
	// [0 0 0 -Inf -Inf -Inf]
	// false
	// true
}
