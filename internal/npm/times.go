// What a check reads of an added dependency's package document: its
// publish times, nothing of its versions' manifests (docs/npm.md "What an
// update brings").

package npm

import (
	"compress/gzip"
	"fmt"
	"io"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/upcheck/upcheck/internal/fetch"
)

// Times is what is read of a dependency's package document: the
// package's first publish time (time.created, else its earliest
// version's), its dist-tags.latest and each version's publish time.
// Memory follows the versions' count, never the document: the versions'
// manifests are skipped without being decoded.
type Times struct {
	Name      string
	Created   time.Time // zero: the document gives none
	Latest    string
	Published map[string]time.Time
}

// DecodeTimes reads a package document as a stream, keeping only Times;
// more than max decoded bytes is ErrTooLarge.
func DecodeTimes(r io.Reader, max int64) (*Times, error) {
	cr := &fetch.CappedReader{R: r, Max: max}
	t, err := decodeTimes(jsontext.NewDecoder(cr, documentOptions))
	if cr.Over {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return t, err
}

func decodeTimes(dec *jsontext.Decoder) (*Times, error) {
	fail := func(format string, args ...any) (*Times, error) {
		return nil, fmt.Errorf("%w: %s", ErrDocument, fmt.Sprintf(format, args...))
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail("%v", err)
	}
	t := &Times{Published: map[string]time.Time{}}
	for dec.PeekKind() != '}' {
		key, err := objectKey(dec)
		if err != nil {
			return fail("%v", err)
		}
		switch key {
		case "name":
			if err := jsonv2.UnmarshalDecode(dec, &t.Name); err != nil {
				return fail("name: %v", err)
			}
		case "dist-tags":
			var tags map[string]string
			if err := jsonv2.UnmarshalDecode(dec, &tags); err != nil {
				return fail("dist-tags: %v", err)
			}
			t.Latest = tags["latest"]
		case "time":
			// Read a member at a time, into Published alone.
			if err := decodeTimesObject(dec, t); err != nil {
				return fail("time: %v", err)
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return fail("%s: %v", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail("%v", err)
	}
	if t.Name == "" {
		return fail("it has no name")
	}
	if t.Created.IsZero() {
		for _, p := range t.Published {
			if t.Created.IsZero() || p.Before(t.Created) {
				t.Created = p
			}
		}
	}
	return t, nil
}

// decodeTimesObject reads a document's "time" into t: "created", and each
// version's publish time; "modified" and what does not parse are passed
// over.
func decodeTimesObject(dec *jsontext.Decoder, t *Times) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		v, err := objectKey(dec)
		if err != nil {
			return err
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return fmt.Errorf("%s: expected a time, found %v", v, tok)
		}
		p, err := time.Parse(time.RFC3339Nano, tok.String())
		switch {
		case err != nil || v == "modified":
		case v == "created":
			t.Created = p
		default:
			t.Published[v] = p
		}
	}
	return expectDelim(dec, '}')
}

// FetchedTimes is a dependency's document as fetched: its Times (nil when
// the registry answered 304: keep the stored ones) and the response's
// validators for the next fetch.
type FetchedTimes struct {
	Times    *Times
	Response fetch.Response
}

// Times is what the fetch of pr gave, read as DecodeTimes reads (nil
// Times on a 304), with Result's refusals and errors.
func (pr *PackageRequest) Times(resp fetch.Response, err error) (FetchedTimes, error) {
	defer resp.Close()
	if err != nil {
		return FetchedTimes{Response: resp}, refusal(err, pr.name)
	}
	if resp.NotModified {
		return FetchedTimes{Response: resp}, nil
	}
	body, gz := resp.Reader(), resp.Gzip
	resp.Body, resp.Spool = nil, nil
	if gz {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return FetchedTimes{Response: resp}, fmt.Errorf("%w: the gzip stream: %v", ErrDocument, err)
		}
		defer zr.Close()
		body = zr
	}
	t, err := DecodeTimes(body, pr.limit)
	switch {
	case err != nil:
		return FetchedTimes{Response: resp}, err
	case t.Name != string(pr.name):
		return FetchedTimes{Response: resp}, fmt.Errorf("%w: it is the document of %q", ErrDocument, t.Name)
	}
	return FetchedTimes{Times: t, Response: resp}, nil
}
