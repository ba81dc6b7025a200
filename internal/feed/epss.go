package feed

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// maxEPSSLine bounds one line of the EPSS CSV.
const maxEPSSLine = 4 << 10

// EPSSScore is one CVE's exploit probability and its percentile, both in
// [0, 1].
type EPSSScore struct {
	CVE              string
	EPSS, Percentile float64
}

// EPSSHeader is what the file's first, commented line says.
type EPSSHeader struct {
	// Model is model_version, "v2025.03.14"; empty when the file has no
	// comment line.
	Model string
	// ScoreDate is score_date; zero when absent.
	ScoreDate time.Time
}

// ReadEPSS streams the daily EPSS CSV from r, gzipped or plain (a file
// unzipped by hand), calling fn for each valid row. The decompressed bytes
// are capped at max (past it, fetch.ErrTooLarge). A first line
// "#model_version:…,score_date:…" is read into the header; then the column
// header must name cve, epss and percentile (in any order), else
// [ErrSchema]. A row whose CVE is not a CVE id, whose values are not numbers
// in [0, 1], or that lacks a column, is skipped and listed with its line
// number. An error from fn ends the read and is returned wrapped.
func ReadEPSS(r io.Reader, max int64, fn func(EPSSScore) error) (EPSSHeader, []Skipped, error) {
	var hdr EPSSHeader
	br := bufio.NewReader(r)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return hdr, nil, fmt.Errorf("%w: the EPSS file is not valid gzip: %v", ErrSchema, err)
		}
		defer zr.Close()
		src = zr
	}
	capped := &fetch.CappedReader{R: src, Max: max}
	sc := bufio.NewScanner(capped)
	sc.Buffer(make([]byte, 0, maxEPSSLine), maxEPSSLine)

	var skipped skipList
	cols := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if len(cols) == 0 {
			if strings.HasPrefix(text, "#") {
				if line != 1 {
					continue
				}
				h, err := parseEPSSComment(text)
				if err != nil {
					return hdr, nil, fmt.Errorf("%w: EPSS line 1: %v", ErrSchema, err)
				}
				hdr = h
				continue
			}
			c, err := epssColumns(text)
			if err != nil {
				return hdr, nil, fmt.Errorf("%w: EPSS line %d: %v", ErrSchema, line, err)
			}
			cols = c
			continue
		}
		s, reason := epssRow(strings.Split(text, ","), cols)
		if reason != "" {
			skipped.add(Skipped{ID: s.CVE, Path: fmt.Sprintf("line %d", line), Reason: reason})
			continue
		}
		if err := fn(s); err != nil {
			return hdr, skipped.result(), fmt.Errorf("EPSS line %d: %w", line, err)
		}
	}
	switch err := sc.Err(); {
	case capped.Over:
		return hdr, skipped.result(), fmt.Errorf("read the EPSS file: %w: more than %d bytes uncompressed", fetch.ErrTooLarge, max)
	case errors.Is(err, bufio.ErrTooLong):
		return hdr, skipped.result(), fmt.Errorf("%w: EPSS line %d is longer than %d bytes", ErrSchema, line+1, maxEPSSLine)
	case err != nil:
		return hdr, skipped.result(), fmt.Errorf("read the EPSS file: %w", err)
	case len(cols) == 0:
		return hdr, nil, fmt.Errorf("%w: the EPSS file has no cve,epss,percentile header", ErrSchema)
	}
	return hdr, skipped.result(), nil
}

func parseEPSSComment(text string) (EPSSHeader, error) {
	var h EPSSHeader
	for part := range strings.SplitSeq(strings.TrimPrefix(text, "#"), ",") {
		k, v, _ := strings.Cut(part, ":")
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "model_version":
			h.Model = v
		case "score_date":
			t, err := epssDate(v)
			if err != nil {
				return h, err
			}
			h.ScoreDate = t
		}
	}
	return h, nil
}

// epssDate reads score_date as the files have written it over the years:
// "2024-07-25T00:00:00+0000", RFC 3339 ("…T12:03:07Z"), a bare date.
func epssDate(v string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05-0700", time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("score_date %q is not a date", v)
}

func epssColumns(text string) (map[string]int, error) {
	cols := map[string]int{}
	for i, c := range strings.Split(text, ",") {
		cols[strings.ToLower(strings.TrimSpace(c))] = i
	}
	var missing []string
	for _, want := range []string{"cve", "epss", "percentile"} {
		if _, ok := cols[want]; !ok {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header %q lacks the %s column(s): not the EPSS scores file", text, strings.Join(missing, ", "))
	}
	return cols, nil
}

func epssRow(fields []string, cols map[string]int) (EPSSScore, string) {
	get := func(name string) (string, bool) {
		i := cols[name]
		if i >= len(fields) {
			return "", false
		}
		return strings.TrimSpace(fields[i]), true
	}
	var s EPSSScore
	cve, ok := get("cve")
	s.CVE = cve
	if !ok {
		return s, "the row has no cve column"
	}
	if !cvePattern.MatchString(cve) {
		return s, fmt.Sprintf("%q is not a CVE id", cve)
	}
	var reason string
	s.EPSS, reason = epssValue(get("epss"))
	if reason != "" {
		return s, "epss " + reason
	}
	s.Percentile, reason = epssValue(get("percentile"))
	if reason != "" {
		return s, "percentile " + reason
	}
	return s, ""
}

func epssValue(v string, ok bool) (float64, string) {
	if !ok {
		return 0, "is missing"
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Sprintf("%q is not a number", v)
	}
	if f < 0 || f > 1 {
		return 0, fmt.Sprintf("%v is outside [0, 1]", f)
	}
	return f, ""
}
