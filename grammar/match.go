package grammar

// Match reports whether text is a sentence of the grammar.
func (g *Grammar) Match(text string) bool {
	m := newMachine(g)
	return m.accepts(m.feed(m.start(), text))
}

// MatchPrefix reports whether text can be extended to a sentence of the
// grammar (every sentence is such a prefix).
func (g *Grammar) MatchPrefix(text string) bool {
	m := newMachine(g)
	return m.feed(m.start(), text) >= 0
}
