package fetch

import (
	"context"
	"strings"
)

// KeyStatementMaxBody caps a key statement: a few keys fit in a fraction.
const KeyStatementMaxBody = 64 << 10

// withSuffix is docURL with suffix appended to its path (a query string,
// if any, is kept after it).
func withSuffix(docURL, suffix string) (string, error) {
	u, err := parseURL(docURL)
	if err != nil {
		return "", err
	}
	u.Path += suffix
	if u.RawPath != "" {
		u.RawPath += suffix
	}
	return u.String(), nil
}

// FetchKeyStatement downloads the key statement published next to a
// document (docURL with ".keys" appended to its path) and its signature
// set (".keys.sig"), with the same guards and limits as any fetch. A
// statement that is not published is a [*StatusError] with code 404 from
// the first request; the signature is fetched only when the statement was.
func (f *Fetcher) FetchKeyStatement(ctx context.Context, docURL string) (body []byte, signatures string, err error) {
	keysURL, err := withSuffix(docURL, ".keys")
	if err != nil {
		return nil, "", err
	}
	resp, err := f.fetch(ctx, Request{URL: keysURL}, KeyStatementMaxBody)
	if err != nil {
		return nil, "", err
	}
	sigURL, err := withSuffix(keysURL, ".sig")
	if err != nil {
		return nil, "", err
	}
	sig, err := f.fetch(ctx, Request{URL: sigURL}, SignatureMaxBody)
	if err != nil {
		return resp.Body, "", err
	}
	return resp.Body, strings.TrimSpace(string(sig.Body)), nil
}
