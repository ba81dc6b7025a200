package manifest

import ()

// yamlScan reads a YAML file's bytes once, before any token is made. It
// follows the nesting: flow collections ([ and { where a value may start,
// or anywhere inside another flow collection) and block ones (a "- "
// entry, a "? " key or a key's ": " at a column right of the open ones)
// count; quoted scalars, comments and block scalars' lines are passed
// over. It counts the tokens the tokenizer would make of the text kept (a
// scalar, an indicator, a comment) and that text's bytes. With keep, it
// copies into out the lines of the top-level entries keep takes, and an
// empty line for each other line. Where it reads YAML differently from the
// tokenizer, the count on the tokens decides.
//
// A yamlScan runs once: the fields after out are what its run has read
// of body so far.
type yamlScan struct {
	limit int
	keep  func(string) bool
	out   []byte

	body        []byte
	line        int   // the line being read, from 1
	col         int   // the column of the byte being read, from 0
	flow        int   // the open flow collections
	block       []int // columns of the open block collections
	keys        []int // keys of each, when it is a mapping
	last        byte  // the last byte that is no blank on this line; 0 at its start
	keyCol      int   // where the scalar being read began
	inSingle    bool  // in a 'quoted' scalar
	inDouble    bool  // in a "quoted" scalar
	scalarBlock int   // >= -1: lines indented more than this are a block scalar's
	lineStart   bool  // the next byte read starts a line
	lineBegin   int   // the offset of this line's first byte
	dropped     bool  // this line belongs to a top-level entry keep does not take
	tokens      int   // the tokens counted in the text kept
	kept        int   // the bytes kept
}

// run returns a *NestingError or a *LimitError at the first line past a
// limit, or nil.
func (sc *yamlScan) run(body []byte) error {
	sc.body, sc.line, sc.scalarBlock, sc.lineStart = body, 1, -2, true
	for i := 0; i < len(body); i++ {
		c := body[i]
		if sc.lineStart {
			var err error
			if i, err = sc.startLine(i); err != nil {
				return err
			}
			if sc.lineStart { // a block scalar's line, passed over
				continue
			}
		} else {
			sc.col++
		}
		if c == '\n' {
			if err := sc.nextLine(i); err != nil {
				return err
			}
			continue
		}
		if sc.inSingle || sc.inDouble {
			i = sc.quoted(i, c)
			continue
		}
		var err error
		if i, err = sc.token(i, c); err != nil {
			return err
		}
	}
	return sc.endLine(len(body))
}

// startLine reads the start of the line whose first byte is at i. A block
// scalar's line is passed over whole: lineStart stays true and startLine
// returns where the line ends. Otherwise, with keep, a top-level line that
// starts an entry says whether the entry's lines are dropped, and
// startLine returns i.
func (sc *yamlScan) startLine(i int) (int, error) {
	body, c := sc.body, sc.body[i]
	sc.lineStart, sc.col, sc.last = false, 0, 0
	if sc.scalarBlock >= -1 && !sc.inSingle && !sc.inDouble {
		indent := 0
		for i+indent < len(body) && body[i+indent] == ' ' {
			indent++
		}
		end := i + indent
		if end >= len(body) || body[end] == '\n' || body[end] == '\r' || indent > sc.scalarBlock {
			for i < len(body) && body[i] != '\n' {
				i++
			}
			return i, sc.nextLine(i)
		}
		sc.scalarBlock = -2
	}
	if sc.keep != nil && sc.flow == 0 && !sc.inSingle && !sc.inDouble && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '#' {
		if c != '-' || !sc.blankAt(i+1) { // a "- " entry goes on with the entry above
			key, ok := plainKey(body[i:])
			sc.dropped = ok && !sc.keep(key)
		}
	}
	return i, nil
}

// quoted reads c, at i in a quoted scalar, and returns where what it read
// ends: past an escaped byte or a doubled single quote.
func (sc *yamlScan) quoted(i int, c byte) int {
	body := sc.body
	if sc.inSingle {
		if c == '\'' {
			if i+1 < len(body) && body[i+1] == '\'' {
				i++
				sc.col++
			} else {
				sc.inSingle, sc.last = false, c
			}
		}
		return i
	}
	if c == '\\' && i+1 < len(body) && body[i+1] != '\n' {
		i++
		sc.col++
	} else if c == '"' {
		sc.inDouble, sc.last = false, c
	}
	return i
}

// token reads c, at i out of any quoted scalar and no newline: a blank, a
// comment, or a byte of a scalar or an indicator, counting a token that
// starts there. It returns where what it read ends: at a comment or a
// block scalar's indicator, the byte before the newline.
func (sc *yamlScan) token(i int, c byte) (int, error) {
	body := sc.body
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		return i, nil
	case c == '#' && (sc.col == 0 || body[i-1] == ' ' || body[i-1] == '\t'):
		if err := sc.count(); err != nil {
			return i, err
		}
		for i+1 < len(body) && body[i+1] != '\n' {
			i++
		}
		return i, nil
	}
	last := sc.last
	start := last == 0 || last == ':' || last == '-' || last == '?' || last == ',' || last == '[' || last == '{'
	// A token starts where a value may start, and at every
	// indicator that ends or separates one.
	if start || (sc.flow > 0 && (c == ',' || c == ']' || c == '}')) || (c == ':' && (sc.blankAt(i+1) || sc.flow > 0)) {
		if err := sc.count(); err != nil {
			return i, err
		}
	}
	return sc.indicator(i, c, start)
}

// indicator reads c, at i out of any quoted scalar, comment or blank, where
// start says a value may start: the indicators that open or close a
// collection, a quoted scalar or a block scalar. It returns where what it
// read ends: at a block scalar's indicator, the byte before the newline.
func (sc *yamlScan) indicator(i int, c byte, start bool) (int, error) {
	body := sc.body
	switch {
	case (c == '\'' || c == '"') && start:
		sc.inSingle, sc.inDouble = c == '\'', c == '"'
		if sc.flow == 0 {
			sc.keyCol = sc.col
		}
	case (c == '[' || c == '{') && (start || sc.flow > 0):
		sc.flow++
		if sc.flow+len(sc.block) > sc.limit {
			return i, &NestingError{Line: sc.line}
		}
	case (c == ']' || c == '}') && sc.flow > 0:
		sc.flow--
	case sc.flow > 0:
	case (c == '-' || c == '?') && start && sc.blankAt(i+1):
		if sc.open(sc.col) {
			return i, &NestingError{Line: sc.line}
		}
	case c == ':' && sc.blankAt(i+1):
		if sc.open(sc.keyCol) {
			return i, &NestingError{Line: sc.line}
		}
		if sc.keys[len(sc.keys)-1]++; sc.keys[len(sc.keys)-1] > MaxYAMLKeys && !sc.dropped {
			return i, &LimitError{Line: sc.line, Keys: true}
		}
	case (c == '|' || c == '>') && start:
		sc.scalarBlock = -1
		if len(sc.block) > 0 {
			sc.scalarBlock = sc.block[len(sc.block)-1]
		}
		for i+1 < len(body) && body[i+1] != '\n' {
			i++
		}
		return i, nil
	case start:
		sc.keyCol = sc.col
	}
	sc.last = c
	return i, nil
}

// open takes a block collection's entry at column c: it closes the
// collections at columns right of c and opens one at c unless one is
// open there. It says whether the nesting is then past the limit.
func (sc *yamlScan) open(c int) bool {
	for len(sc.block) > 0 && sc.block[len(sc.block)-1] > c {
		sc.block, sc.keys = sc.block[:len(sc.block)-1], sc.keys[:len(sc.keys)-1]
	}
	if len(sc.block) == 0 || sc.block[len(sc.block)-1] < c {
		sc.block, sc.keys = append(sc.block, c), append(sc.keys, 0)
	}
	return sc.flow+len(sc.block) > sc.limit
}

// blankAt says whether body's byte at i is a blank, a line's end or past
// the end of body.
func (sc *yamlScan) blankAt(i int) bool {
	body := sc.body
	return i >= len(body) || body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'
}

// nextLine ends the line whose newline is at i (endLine) and goes to the
// next line.
func (sc *yamlScan) nextLine(i int) error {
	if err := sc.endLine(i); err != nil {
		return err
	}
	sc.line++
	sc.lineStart = true
	return nil
}

// endLine ends the line whose newline is at i (or the file's last line):
// its bytes count as kept unless dropped, and with keep, out gets the
// line, or an empty line for a line dropped.
func (sc *yamlScan) endLine(i int) error {
	body := sc.body
	end := min(i+1, len(body))
	if !sc.dropped {
		sc.kept += end - sc.lineBegin
		if sc.kept > MaxYAMLBytes {
			return &LimitError{Line: sc.line, Bytes: true}
		}
	}
	if sc.keep != nil {
		if sc.dropped {
			if i < len(body) {
				sc.out = append(sc.out, '\n')
			}
		} else {
			sc.out = append(sc.out, body[sc.lineBegin:end]...)
		}
	}
	sc.lineBegin = end
	return nil
}

// count counts one token more in the text kept, or returns a *LimitError
// past MaxYAMLTokens.
func (sc *yamlScan) count() error {
	if sc.dropped {
		return nil
	}
	if sc.tokens++; sc.tokens > MaxYAMLTokens {
		return &LimitError{Line: sc.line}
	}
	return nil
}

// plainKey is the key of a top-level line that starts with a plain
// mapping key ("packages:"), or false.
func plainKey(b []byte) (string, bool) {
	for i, c := range b {
		switch {
		case c == ':' && i > 0 && (i+1 == len(b) || b[i+1] == ' ' || b[i+1] == '\n' || b[i+1] == '\r'):
			return string(b[:i]), true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9' && i > 0, c == '_' && i > 0, c == '-' && i > 0:
		default:
			return "", false
		}
	}
	return "", false
}
