package feed

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"time"
)

// maxModifiedLine bounds one line of modified_id.csv: a timestamp and an id.
const maxModifiedLine = 1 << 10

// Modified is one line of modified_id.csv: a record and when it last changed.
type Modified struct {
	At time.Time
	ID string
}

// ReadModifiedIDs reads an ecosystem's modified_id.csv, one
// "<RFC 3339 time>,<ID>" line per record, newest first (as OSV's exporter
// writes it: encoding/csv, RFC 3339 with nanoseconds), and returns the
// records modified after since, stopping at the first line that is not
// newer (to the second: see below). tooMany reports that more than max were newer (ids then holds the
// first max): the caller reads the whole archive instead. max <= 0 means no
// limit on their number. A malformed line, or a line newer than the one
// before it (the file is not sorted as promised, so stopping early could
// miss records), is an error naming the line.
func ReadModifiedIDs(r io.Reader, since time.Time, max int) (ids []Modified, tooMany bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, maxModifiedLine), maxModifiedLine)
	var prev time.Time
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		m, err := parseModified(text)
		if err != nil {
			return nil, false, fmt.Errorf("%w: modified_id.csv line %d: %v", ErrSchema, line, err)
		}
		// OSV's exporter sorts the lines as strings, and RFC 3339 with
		// trimmed fractions sorts "10:00:00Z" before "10:00:00.5Z": the
		// order holds to the second only, so the check and the stop are
		// made on whole seconds and the lines of since's own second are
		// each compared.
		sec := m.At.Truncate(time.Second)
		if !prev.IsZero() && sec.After(prev) {
			return nil, false, fmt.Errorf("%w: modified_id.csv line %d: %s is newer than the line before: the file is not sorted newest first",
				ErrSchema, line, m.At.Format(time.RFC3339))
		}
		prev = sec
		if sec.Before(since.Truncate(time.Second)) {
			return ids, false, nil
		}
		if !m.At.After(since) {
			continue
		}
		if max > 0 && len(ids) == max {
			return ids, true, nil
		}
		ids = append(ids, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, false, fmt.Errorf("%w: modified_id.csv line %d is longer than %d bytes", ErrSchema, line+1, maxModifiedLine)
		}
		return nil, false, fmt.Errorf("read modified_id.csv: %w", err)
	}
	return ids, false, nil
}

func parseModified(text string) (Modified, error) {
	ts, id, ok := strings.Cut(text, ",")
	if !ok {
		return Modified{}, fmt.Errorf("%q: want TIME,ID", text)
	}
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(ts))
	if err != nil {
		return Modified{}, fmt.Errorf("%q is not an RFC 3339 time", ts)
	}
	id = strings.TrimSpace(id)
	switch {
	case id == "" || strings.ContainsAny(id, ", \t\"\\"):
		return Modified{}, fmt.Errorf("%q is not a record id", id)
	case strings.Contains(id, "/"):
		return Modified{}, fmt.Errorf("%q names an ecosystem: this is the index of all ecosystems, not of one archive's", id)
	}
	return Modified{At: at.UTC(), ID: id}, nil
}

// SiblingURL is the URL of name in the folder of archiveURL: ".../npm/all.zip"
// and "modified_id.csv" give ".../npm/modified_id.csv", and "ID.json" a
// record's own URL. The archive URL's query, if any, is kept (a mirror's
// access token).
func SiblingURL(archiveURL, name string) (string, error) {
	if err := checkURL(archiveURL); err != nil {
		return "", fmt.Errorf("feed archive: %w", err)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
		return "", fmt.Errorf("feed archive: %q is not a file name", name)
	}
	u, _ := url.Parse(archiveURL)
	dir := path.Dir(u.Path)
	if dir == "." || dir == "/" {
		dir = ""
	}
	u.Path = dir + "/" + name
	u.RawPath = ""
	u.Fragment = ""
	return u.String(), nil
}
