package manifest

import (
	"bytes"
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

// MaxYAMLTokens and MaxYAMLBytes bound what of a manifest's or a
// lockfile's YAML is tokenized and parsed. The YAML library holds the text
// it reads as runes (4 bytes a byte), makes some 250 bytes of each token,
// and its parser's time grows with the square of a mapping's keys: a 10 MB
// pnpm-lock.yaml parsed whole peaked at 813 MiB of heap and took a minute.
// Within these bounds the tokens and the parse stay within some 150 MiB
// whatever the text (140 MiB measured at the worst: 200,000 tokens in
// mappings of 10,000 keys; docs/npm.md, Size). A manifest is read whole; of
// a pnpm-lock.yaml only the entries read are tokenized (TokenizeYAMLKeys):
// a real one's importers are a few thousand tokens, whatever the size of
// its packages and snapshots.
const (
	MaxYAMLTokens = 200_000
	MaxYAMLBytes  = 8 << 20
	// MaxYAMLKeys bounds the keys of one block mapping: the parser's
	// memory grows with their square (66,000 took 8.9 GiB; a real
	// lockfile's largest mapping read, importers "."'s dependencies, has
	// some hundreds).
	MaxYAMLKeys = 10_000
)

// LimitError refuses a YAML file whose text to parse is past MaxYAMLTokens,
// MaxYAMLBytes or MaxYAMLKeys.
type LimitError struct {
	// Line is where the text went past the limit.
	Line int
	// Bytes says the limit is MaxYAMLBytes, Keys MaxYAMLKeys; otherwise
	// it is MaxYAMLTokens.
	Bytes, Keys bool
}

// Error implements error.
func (e *LimitError) Error() string {
	if e.Keys {
		return fmt.Sprintf("line %d: a YAML mapping to read has more than %d keys (the limit on the YAML parsed): refused before it is parsed", e.Line, MaxYAMLKeys)
	}
	if e.Bytes {
		return fmt.Sprintf("line %d: the YAML to read is larger than %d bytes (the limit on the YAML parsed): refused before it is parsed", e.Line, MaxYAMLBytes)
	}
	return fmt.Sprintf("line %d: the YAML to read has more than %d tokens (keys, values and indicators; the limit on the YAML parsed): refused before it is parsed", e.Line, MaxYAMLTokens)
}

// TokenizeYAML is body's YAML tokens, as the parser takes them
// (parser.Parse), or a *NestingError when body nests deeper than
// MaxYAMLNesting, or a *LimitError when it is past MaxYAMLTokens,
// MaxYAMLBytes or MaxYAMLKeys. Two passes say so: a scan of the bytes first, which
// stops at the line that goes too deep or too far before any token is
// made (the tokenizer makes a few hundred bytes of each "[", so 100 KB of
// them were 24 MiB), then a count on the tokens as they are made, which is
// exactly the parser's view where the first pass, reading YAML's
// indicators without its every rule, may have seen less.
func TokenizeYAML(body []byte) (token.Tokens, error) {
	return tokenize(body, nil)
}

// TokenizeYAMLKeys is TokenizeYAML of only the top-level entries of body
// whose key keep takes (and of any top-level line that is no plain key):
// the other entries' lines are tokenized as empty lines, so that the
// tokens' lines are body's. Nesting is checked over the whole of body;
// MaxYAMLTokens, MaxYAMLBytes and MaxYAMLKeys bound what is tokenized.
func TokenizeYAMLKeys(body []byte, keep func(key string) bool) (token.Tokens, error) {
	return tokenize(body, keep)
}

func tokenize(body []byte, keep func(string) bool) (token.Tokens, error) {
	sc := yamlScan{limit: MaxYAMLNesting, keep: keep}
	if keep != nil {
		sc.out = make([]byte, 0, min(len(body), 1<<20))
	}
	if err := sc.run(body); err != nil {
		return nil, err
	}
	var text string
	if keep == nil {
		text = string(body)
	} else {
		// The empty lines after the last entry kept say nothing: the
		// tokenizer would hold them all as the last token's text.
		text = string(bytes.TrimRight(sc.out, "\n")) + "\n"
		sc.out = nil
	}
	var s scanner.Scanner
	s.Init(text)
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
			if len(tokens) >= MaxYAMLTokens {
				return nil, &LimitError{Line: tk.Position.Line}
			}
			if d.tooManyKeys() {
				return nil, &LimitError{Line: tk.Position.Line, Keys: true}
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
	keys  []int // the keys of each open block collection that is a mapping
}

// add takes tk, whose predecessors are before, and returns the depth after it.
func (d *nesting) add(tk *token.Token, before token.Tokens) int {
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		d.flow++
	case token.SequenceEndType, token.MappingEndType:
		d.flow = max(d.flow-1, 0)
	case token.DocumentHeaderType, token.DocumentEndType:
		d.flow, d.block, d.keys = 0, d.block[:0], d.keys[:0]
	case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
		if d.flow > 0 {
			break
		}
		col := tk.Position.Column
		if tk.Type == token.MappingValueType && len(before) > 0 {
			col = before[len(before)-1].Position.Column // the key's
		}
		for len(d.block) > 0 && d.block[len(d.block)-1] > col {
			d.block, d.keys = d.block[:len(d.block)-1], d.keys[:len(d.keys)-1]
		}
		if len(d.block) == 0 || d.block[len(d.block)-1] < col {
			d.block, d.keys = append(d.block, col), append(d.keys, 0)
		}
		if tk.Type == token.MappingValueType {
			d.keys[len(d.keys)-1]++
		}
	}
	return d.flow + len(d.block)
}

// tooManyKeys says whether the innermost block mapping has more keys than
// MaxYAMLKeys.
func (d *nesting) tooManyKeys() bool {
	return len(d.keys) > 0 && d.keys[len(d.keys)-1] > MaxYAMLKeys
}
