package updatecheck

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// failure is why a source gave no usable document, as it is stored: a
// stable kind the pages word (readmodel.ErrorKind), the arguments the
// sentence needs (readmodel.FailureArgs), and the technical text for
// whoever wants the detail. It is classified here, where the typed error
// still exists; what is stored is the kind and its arguments as values.
type failure struct {
	kind   readmodel.ErrorKind
	args   readmodel.FailureArgs
	detail string
}

// failed reports whether there is a failure at all.
func (f failure) failed() bool { return f.kind != "" }

// failureOf classifies an error of the fetcher (the document's or its .sig
// file's fetch). prefix, when set, leads the technical text.
func failureOf(err error, prefix string) failure {
	f := failure{kind: readmodel.ErrorOther, detail: err.Error()}
	if prefix != "" {
		f.detail = prefix + ": " + f.detail
	}
	var (
		status  *fetch.StatusError
		timeout *fetch.TimeoutError
		private *fetch.PrivateAddressError
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
	)
	switch {
	case errors.Is(err, npm.ErrNoSuchPackage):
		f.kind = readmodel.ErrorNoSuchPackage
	case errors.Is(err, npm.ErrCredentialsRefused):
		f.kind = readmodel.ErrorCredentialsRefused
		if errors.As(err, &status) {
			f.args.Status = status.Code
		}
	case errors.Is(err, npm.ErrNoRegistry):
		f.kind = readmodel.ErrorNoRegistry
	case errors.Is(err, npm.ErrTooLarge):
		f.kind = readmodel.ErrorTooLarge
	case errors.Is(err, npm.ErrDocument), errors.Is(err, npm.ErrKeys):
		f.kind, f.args.Problem = readmodel.ErrorMalformed, err.Error()
		if ce, ok := errors.AsType[*fetch.ConsumeError](err); ok {
			f.args.Problem = ce.Err.Error()
		}
	case errors.As(err, &status):
		f.kind, f.args.Status = readmodel.ErrorHTTPStatus, status.Code
	case errors.As(err, &timeout):
		f.kind, f.args.Timeout = readmodel.ErrorTimeout, timeout.After
	case errors.As(err, &private):
		f.kind = readmodel.ErrorPrivateAddress
		if private.Addr.IsValid() {
			f.args.Address = private.Addr.String()
		}
	case errors.Is(err, fetch.ErrPrivateAddress):
		f.kind = readmodel.ErrorPrivateAddress
	case errors.Is(err, fetch.ErrTooLarge):
		f.kind = readmodel.ErrorTooLarge
	case errors.Is(err, fetch.ErrTooManyRedirects):
		f.kind = readmodel.ErrorRedirects
	case errors.Is(err, fetch.ErrUnsupportedScheme):
		f.kind = readmodel.ErrorBadURL
	case errors.As(err, &dnsErr):
		f.kind = readmodel.ErrorDNS
	case errors.As(err, &certErr), isCertificateError(err):
		f.kind = readmodel.ErrorTLS
	case isConnectionError(err):
		f.kind = readmodel.ErrorConnect
	}
	return f
}

// isCertificateError covers the x509 errors a TLS handshake reports
// without wrapping them in a CertificateVerificationError.
func isCertificateError(err error) bool {
	var (
		host    x509.HostnameError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &host) || errors.As(err, &unknown) || errors.As(err, &invalid)
}

// isConnectionError: no connection could be made (refused, no route), or
// it broke before an answer came (reset, closed early): the publisher's
// server could not be reached.
func isConnectionError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// The failures of the acceptance policy (accept): the document came, and
// was refused.

func unsignedFailure() failure {
	return failure{kind: readmodel.ErrorUnsigned, detail: "the document is unsigned, and a key is pinned for its source"}
}

func signatureFailure(err error) failure {
	return failure{kind: readmodel.ErrorBadSignature, detail: fmt.Sprintf("signature: %v", err)}
}

func pinnedKeyFailure(err error) failure {
	return failure{kind: readmodel.ErrorPinnedKey, detail: fmt.Sprintf("pinned key: %v", err)}
}

// documentFailure is a document that does not parse or validate; the
// argument is updatedoc's own words, which name the place ("malformed JSON
// at line 3, column 5: …").
func documentFailure(err error) failure {
	return failure{kind: readmodel.ErrorMalformed, args: readmodel.FailureArgs{Problem: strings.TrimPrefix(err.Error(), "update document: ")},
		detail: fmt.Sprintf("invalid document: %v", err)}
}

// rollbackFailure is a document older than one already accepted.
func rollbackFailure(err error, incoming, stored int64) failure {
	f := failure{kind: readmodel.ErrorRollback, detail: err.Error()}
	if errors.Is(err, updatedoc.ErrRollback) {
		f.args = readmodel.RollbackArgs(incoming, stored)
	}
	return f
}

// notModifiedFailure is a 304 the stored document cannot answer for.
func notModifiedFailure(err error) failure {
	return failure{kind: readmodel.ErrorNotModifiedUntrusted,
		detail: fmt.Sprintf("the publisher answered 304 Not Modified, but %v", err)}
}
