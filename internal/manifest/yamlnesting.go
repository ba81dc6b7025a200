package manifest

import (
	"fmt"
	"io"

	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// MaxYAMLNesting is how deeply a manifest's or a lockfile's YAML may nest
// collections: flow ones ([ and {) and block ones (a "- " entry or a key
// further indented than its parent) counted together. A real manifest or
// pnpm-lock.yaml nests five or six levels.
//
// The YAML parser's memory grows with the square of the nesting (a
// 100 KB file of "[" is 2.5 GB), while its tokenizer's grows with the
// file's length: TokenizeYAML counts the depth on the tokens as they are
// made, and the parser is handed only files within the limit.
const MaxYAMLNesting = 64

// NestingError refuses a YAML file that nests deeper than MaxYAMLNesting.
type NestingError struct {
	// Line is where the nesting went past the limit.
	Line int
}

// Error implements error.
func (e *NestingError) Error() string {
	return fmt.Sprintf("line %d: the YAML nests deeper than %d levels (no manifest or lockfile does): refused before it is parsed", e.Line, MaxYAMLNesting)
}

// TokenizeYAML is body's YAML tokens, as the parser takes them
// (parser.Parse), or a *NestingError when body nests deeper than
// MaxYAMLNesting. Two passes say so: a scan of the bytes first, which
// stops at the line that goes too deep before any token is made (the
// tokenizer makes a few hundred bytes of each "[", so 100 KB of them were
// 24 MiB), then a count on the tokens as they are made, which is exactly
// the parser's view where the first pass, reading YAML's indicators
// without its every rule, may have seen less.
func TokenizeYAML(body []byte) (token.Tokens, error) {
	if line := scanNesting(body, MaxYAMLNesting); line > 0 {
		return nil, &NestingError{Line: line}
	}
	var s scanner.Scanner
	s.Init(string(body))
	var tokens token.Tokens
	var d nesting
	for {
		sub, err := s.Scan()
		if err == io.EOF {
			return tokens, nil
		}
		for _, tk := range sub {
			if d.add(tk, tokens) > MaxYAMLNesting {
				return nil, &NestingError{Line: tk.Position.Line}
			}
			tokens.Add(tk)
		}
	}
}

// nesting follows the depth of a token stream: the open flow collections,
// and the columns of the open block collections, which a token at a
// column left of them closes.
type nesting struct {
	flow  int
	block []int
}

// add takes tk, whose predecessors are before, and returns the depth after it.
func (d *nesting) add(tk *token.Token, before token.Tokens) int {
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		d.flow++
	case token.SequenceEndType, token.MappingEndType:
		d.flow = max(d.flow-1, 0)
	case token.DocumentHeaderType, token.DocumentEndType:
		d.flow, d.block = 0, d.block[:0]
	case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
		if d.flow > 0 {
			break
		}
		col := tk.Position.Column
		if tk.Type == token.MappingValueType && len(before) > 0 {
			col = before[len(before)-1].Position.Column // the key's
		}
		for len(d.block) > 0 && d.block[len(d.block)-1] > col {
			d.block = d.block[:len(d.block)-1]
		}
		if len(d.block) == 0 || d.block[len(d.block)-1] < col {
			d.block = append(d.block, col)
		}
	}
	return d.flow + len(d.block)
}

// scanNesting returns the line where body's nesting first goes past limit,
// or 0. It reads the bytes once, keeping nothing: flow collections ([ and
// { where a value may start, or anywhere inside another flow collection)
// and block ones (a "- " entry, a "? " key or a key's ": " at a column
// right of the open ones) count; quoted scalars, comments and block
// scalars' lines are passed over. Where it reads YAML differently from the
// tokenizer, the count on the tokens decides.
func scanNesting(body []byte, limit int) int {
	var (
		line        = 1
		col         = 0
		flow        = 0
		block       []int // columns of the open block collections
		last        byte  // the last byte that is no blank on this line; 0 at its start
		keyCol      = 0   // where the scalar being read began
		inSingle    bool  // in a 'quoted' scalar
		inDouble    bool  // in a "quoted" scalar
		scalarBlock = -2  // >= -1: lines indented more than this are a block scalar's
		lineStart   = true
	)
	open := func(c int) bool { // a block collection's entry at column c
		for len(block) > 0 && block[len(block)-1] > c {
			block = block[:len(block)-1]
		}
		if len(block) == 0 || block[len(block)-1] < c {
			block = append(block, c)
		}
		return flow+len(block) > limit
	}
	blankAt := func(i int) bool {
		return i >= len(body) || body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if lineStart {
			lineStart, col, last = false, 0, 0
			if scalarBlock >= -1 && !inSingle && !inDouble {
				indent := 0
				for i+indent < len(body) && body[i+indent] == ' ' {
					indent++
				}
				end := i + indent
				if end >= len(body) || body[end] == '\n' || body[end] == '\r' || indent > scalarBlock {
					for i < len(body) && body[i] != '\n' {
						i++
					}
					line++
					lineStart = true
					continue
				}
				scalarBlock = -2
			}
		} else {
			col++
		}
		if c == '\n' {
			line++
			lineStart = true
			continue
		}
		switch {
		case inSingle:
			if c == '\'' {
				if i+1 < len(body) && body[i+1] == '\'' {
					i++
					col++
				} else {
					inSingle, last = false, c
				}
			}
			continue
		case inDouble:
			if c == '\\' && i+1 < len(body) && body[i+1] != '\n' {
				i++
				col++
			} else if c == '"' {
				inDouble, last = false, c
			}
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '#' && (col == 0 || body[i-1] == ' ' || body[i-1] == '\t'):
			for i+1 < len(body) && body[i+1] != '\n' {
				i++
			}
			continue
		}
		start := last == 0 || last == ':' || last == '-' || last == '?' || last == ',' || last == '[' || last == '{'
		switch {
		case (c == '\'' || c == '"') && start:
			inSingle, inDouble = c == '\'', c == '"'
			if flow == 0 {
				keyCol = col
			}
		case (c == '[' || c == '{') && (start || flow > 0):
			flow++
			if flow+len(block) > limit {
				return line
			}
		case (c == ']' || c == '}') && flow > 0:
			flow--
		case flow > 0:
		case (c == '-' || c == '?') && start && blankAt(i+1):
			if open(col) {
				return line
			}
		case c == ':' && blankAt(i+1):
			if open(keyCol) {
				return line
			}
		case (c == '|' || c == '>') && start:
			scalarBlock = -1
			if len(block) > 0 {
				scalarBlock = block[len(block)-1]
			}
			for i+1 < len(body) && body[i+1] != '\n' {
				i++
			}
			continue
		case start:
			keyCol = col
		}
		last = c
	}
	return 0
}
