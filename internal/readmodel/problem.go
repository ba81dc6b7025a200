package readmodel

// ErrorKind is the stable kind of a source's last failure, stored in
// sources.last_error_kind when the failure is recorded (updatecheck
// classifies the typed error there) and worded by the pages (views'
// problemSentence, the one place that turns a kind into a sentence). The
// technical text stays beside it, in sources.last_error, for whoever needs
// the detail. The values are stored: add kinds, never rename one.
type ErrorKind = string

// The kinds. Each names the argument its sentence needs, stored in
// sources.last_error_arg ("" when none).
const (
	// ErrorHTTPStatus: the publisher answered with another status than 200
	// or 304. Arg: the status code, "503".
	ErrorHTTPStatus ErrorKind = "http_status"
	// ErrorConnect: no connection could be made (refused, reset, no route).
	ErrorConnect ErrorKind = "connect"
	// ErrorDNS: the publisher's host name does not resolve.
	ErrorDNS ErrorKind = "dns"
	// ErrorTimeout: the publisher did not answer in time. Arg: the time
	// allowed, as Go writes a duration ("15s").
	ErrorTimeout ErrorKind = "timeout"
	// ErrorTLS: the publisher's certificate is not trusted.
	ErrorTLS ErrorKind = "tls"
	// ErrorPrivateAddress: the guard refused a loopback or private address
	// (UPCHECK_ALLOW_PRIVATE_SOURCES=1 allows them). Arg: the address.
	ErrorPrivateAddress ErrorKind = "private_address"
	// ErrorTooLarge: the document is larger than upcheck reads.
	ErrorTooLarge ErrorKind = "too_large"
	// ErrorRedirects: too many redirects, or one to another scheme.
	ErrorRedirects ErrorKind = "redirects"
	// ErrorBadURL: the source's address is not an http or https URL.
	ErrorBadURL ErrorKind = "bad_url"
	// ErrorUnsigned: a key is pinned for the source and the document came
	// without a signature (nor a .sig file).
	ErrorUnsigned ErrorKind = "unsigned"
	// ErrorBadSignature: the signature does not match the pinned key.
	ErrorBadSignature ErrorKind = "bad_signature"
	// ErrorPinnedKey: the key pinned in the manifest is not a valid key.
	ErrorPinnedKey ErrorKind = "pinned_key"
	// ErrorMalformed: the document is not a valid update document. Arg:
	// what is wrong and where ("malformed JSON at line 3, column 5: …").
	ErrorMalformed ErrorKind = "malformed"
	// ErrorRollback: the document is older than one already accepted. Arg:
	// its sequence and the stored one, "41 < 42".
	ErrorRollback ErrorKind = "rollback"
	// ErrorNotModifiedUntrusted: a 304 for a stored document that is not
	// trusted under the key pinned now.
	ErrorNotModifiedUntrusted ErrorKind = "not_modified_untrusted"
	// ErrorEvaluation: the document was read, but this component could not
	// be evaluated from it (its package is missing, a version does not
	// parse). A component's fact, not a source's: never stored in sources.
	ErrorEvaluation ErrorKind = "evaluation"
	// ErrorOther: anything else; the technical text says what.
	ErrorOther ErrorKind = "other"
)
