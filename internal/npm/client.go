package npm

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/upcheck/upcheck/internal/fetch"
)

// The ways a registry refuses a package, each with words of its own.
var (
	// ErrNoSuchPackage: the registry answered 404 for the package.
	ErrNoSuchPackage = errors.New("the registry has no such package")
	// ErrCredentialsRefused: the registry answered 401 or 403: the token
	// is missing, wrong, or may not read the package.
	ErrCredentialsRefused = errors.New("the registry refused the credentials for the package")
)

// Fetched is a package document as fetched: the package (nil when the
// registry answered 304: keep the stored one) and the response's
// validators for the next fetch.
type Fetched struct {
	Package  *Package
	Response fetch.Response
}

// Client fetches package documents and keys through the guarded fetcher
// (private addresses, timeouts, per-host limits, one retry, Retry-After).
type Client struct {
	Fetcher    *fetch.Fetcher
	Registries Registries
	// MaxDocument caps a package document's decoded size
	// (DefaultMaxDocument when 0).
	MaxDocument int64
}

// Package fetches name's full package document (the abbreviated install
// format has no publish times), sending etag and lastModified as
// conditional headers, and decodes it (PackageRequest). ErrNoRegistry when
// no setting names the registry, ErrNoSuchPackage and
// ErrCredentialsRefused for the registry's refusals; a cancelled ctx gives
// fetch's cancellation error.
func (c *Client) Package(ctx context.Context, name Name, etag, lastModified string) (Fetched, error) {
	pr, err := c.PackageRequest(name, etag, lastModified)
	if err != nil {
		return Fetched{}, err
	}
	resp, err := c.Fetcher.Fetch(ctx, pr.Request)
	return pr.Result(resp, err)
}

// PackageRequest is the fetch of one package document, for a caller that
// runs many through fetch.Fetcher.Run (the check). The document is
// fetched as the registry compressed it (fetch.Request.Compressed: a
// popular package's 36 MB are about 4 MB gzipped; one sent uncompressed
// anyway is spooled to a temporary file past fetch.SpoolAbove, never held
// whole) and decoded by Result as a stream, keeping only what Package
// holds: a caller of Run calls Result in its callback, once the
// registry's connection slot is free, so that decoding never holds it. A
// caller that does not call Result closes the response
// (fetch.Response.Close).
type PackageRequest struct {
	Request fetch.Request
	// Keep, when set, keeps the dependencies of the versions it names
	// (DecodePackageKeeping).
	Keep  KeepDependencies
	name  Name
	limit int64
}

// PackageRequest prepares the fetch Package makes: the registry that
// serves name (ErrNoRegistry when none does), its token and the cap.
func (c *Client) PackageRequest(name Name, etag, lastModified string) (*PackageRequest, error) {
	u, err := c.Registries.PackageURL(name)
	if err != nil {
		return nil, err
	}
	limit := c.MaxDocument
	if limit <= 0 {
		limit = DefaultMaxDocument
	}
	pr := &PackageRequest{name: name, limit: limit}
	pr.Request = c.request(u, fetch.Request{ETag: etag, LastModified: lastModified, Accept: "application/json",
		MaxBody: limit, Compressed: true})
	return pr, nil
}

// Result is what the fetch of pr gave: the package, decoded as a stream
// from the body (nil on a 304), or the registry's refusal in words of its
// own (ErrNoSuchPackage, ErrCredentialsRefused); a document that is not
// the package's is ErrDocument, one past the cap decompressed ErrTooLarge;
// every other error is as fetch gave it.
func (pr *PackageRequest) Result(resp fetch.Response, err error) (Fetched, error) {
	defer resp.Close()
	if err != nil {
		return Fetched{Response: resp}, refusal(err, pr.name)
	}
	if resp.NotModified {
		return Fetched{Response: resp}, nil
	}
	body, gz := resp.Reader(), resp.Gzip
	resp.Body, resp.Spool = nil, nil // the bytes as sent are not kept
	if gz {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return Fetched{Response: resp}, fmt.Errorf("%w: the gzip stream: %v", ErrDocument, err)
		}
		defer zr.Close()
		body = zr
	}
	p, err := DecodePackageKeeping(body, pr.limit, pr.Keep) // a broken gzip stream is ErrDocument too
	switch {
	case err != nil:
		return Fetched{Response: resp}, err
	case p.Name != string(pr.name):
		return Fetched{Response: resp}, fmt.Errorf("%w: it is the document of %q", ErrDocument, p.Name)
	}
	return Fetched{Package: p, Response: resp}, nil
}

// Keys fetches the signing keys of the registry that serves name; a
// registry that publishes none (404) gives no keys and no error.
func (c *Client) Keys(ctx context.Context, name Name) ([]Key, error) {
	reg, err := c.Registries.For(name)
	if err != nil {
		return nil, err
	}
	u := reg.JoinPath(KeysPath)
	var keys []Key
	req := fetch.Request{Accept: "application/json", MaxBody: maxKeys, Consume: func(r io.Reader) error {
		var err error
		keys, err = ParseKeys(r)
		return err
	}}
	_, err = c.fetch(ctx, u, req)
	if se, ok := errors.AsType[*fetch.StatusError](err); ok && se.Code == http.StatusNotFound {
		return nil, nil
	}
	return keys, err
}

// fetch sends req to u with the token npm would send there, if any.
func (c *Client) fetch(ctx context.Context, u *url.URL, req fetch.Request) (fetch.Response, error) {
	return c.Fetcher.Fetch(ctx, c.request(u, req))
}

// request is req addressed to u, with the token npm would send there and,
// after a redirect, the token npm would send to its target.
func (c *Client) request(u *url.URL, req fetch.Request) fetch.Request {
	req.URL = u.String()
	req.Bearer = c.Registries.bearer
	return req
}

// refusal names the registry's refusals; every other error is as fetch
// gave it.
func refusal(err error, name Name) error {
	se, ok := errors.AsType[*fetch.StatusError](err)
	switch {
	case !ok:
		return err
	case se.Code == http.StatusNotFound:
		return fmt.Errorf("%w: %s", ErrNoSuchPackage, name)
	case se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden:
		return fmt.Errorf("%w: %s: %w", ErrCredentialsRefused, name, err)
	}
	return err
}
