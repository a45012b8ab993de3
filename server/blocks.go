package server

import (
	"encoding/json"
	"strings"
)

// blockKind is the kind of an output block.
type blockKind uint8

const (
	blockThinking blockKind = iota
	blockText
	blockTool
)

// block is one part of an answer as the Anthropic Messages and OpenAI
// Responses APIs return it: a thinking block, a text block or a tool
// call, in the order the model wrote them.
type block struct {
	kind blockKind
	text string   // thinking or text; a tool's arguments
	call toolCall // for blockTool
}

// blockEvent is what a streaming API is told about a block.
type blockEvent uint8

const (
	blockStart blockEvent = iota
	blockDelta
	blockStop
)

// blockList orders deltas into blocks: a new block whenever the kind
// changes, one per tool call. Streaming handlers set emit to write each
// step as an event; the list keeps the whole answer either way.
type blockList struct {
	blocks []block
	open   bool // the last block may still grow
	// emit is told of each step: i indexes blocks, text is the new part
	// of a delta.
	emit func(ev blockEvent, i int, text string) error
}

func (l *blockList) send(ev blockEvent, text string) error {
	if l.emit == nil {
		return nil
	}
	return l.emit(ev, len(l.blocks)-1, text)
}

// append adds text of kind, opening a block when needed.
func (l *blockList) append(kind blockKind, text string, call *toolCall) error {
	if text == "" && call == nil {
		return nil
	}
	last := len(l.blocks) - 1
	if call != nil || !l.open || l.blocks[last].kind != kind {
		if err := l.close(); err != nil {
			return err
		}
		b := block{kind: kind}
		if call != nil {
			b.call = *call
		}
		l.blocks = append(l.blocks, b)
		l.open = true
		if err := l.send(blockStart, ""); err != nil {
			return err
		}
		last++
	}
	l.blocks[last].text += text
	if err := l.send(blockDelta, text); err != nil {
		return err
	}
	if call != nil {
		return l.close() // a call arrives whole
	}
	return nil
}

// add takes a delta; it is the fn of generation.each.
func (l *blockList) add(d delta) error {
	if err := l.append(blockThinking, d.reasoning, nil); err != nil {
		return err
	}
	if err := l.append(blockText, d.content, nil); err != nil {
		return err
	}
	for i := range d.calls {
		if err := l.append(blockTool, d.calls[i].Function.Arguments, &d.calls[i]); err != nil {
			return err
		}
	}
	return nil
}

// close ends the open block.
func (l *blockList) close() error {
	if !l.open {
		return nil
	}
	l.open = false
	return l.send(blockStop, "")
}

// calls counts the tool calls.
func (l *blockList) calls() int {
	n := 0
	for _, b := range l.blocks {
		if b.kind == blockTool {
			n++
		}
	}
	return n
}

// argsObject returns a call's arguments as a JSON object, as the Anthropic
// and Ollama formats carry them; arguments that are not one (a model
// wrote a string) become {}.
func argsObject(args string) json.RawMessage {
	a := strings.TrimSpace(args)
	if strings.HasPrefix(a, "{") && json.Valid([]byte(a)) {
		return json.RawMessage(a)
	}
	return json.RawMessage("{}")
}
