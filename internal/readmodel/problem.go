package readmodel

import (
	"fmt"
	"net/http"
	"time"
)

// ErrorKind is the stable kind of a source's last failure, stored in
// sources.last_error_kind when the failure is recorded (updatecheck
// classifies the typed error there) and worded by ProblemSentence, the one
// place that turns a kind into a sentence, for the pages and the
// notifications alike. The technical text stays beside it, in
// sources.last_error, for whoever needs the detail. The values are stored: add kinds, never rename one.
type ErrorKind string

// The kinds. Each names the arguments its sentence needs (FailureArgs),
// stored in sources.last_error_args (none: the zero FailureArgs).
const (
	// ErrorHTTPStatus: the publisher answered with another status than 200
	// or 304. Args: Status, the status code (503).
	ErrorHTTPStatus ErrorKind = "http_status"
	// ErrorConnect: no connection could be made (refused, reset, no route).
	ErrorConnect ErrorKind = "connect"
	// ErrorDNS: the publisher's host name does not resolve.
	ErrorDNS ErrorKind = "dns"
	// ErrorTimeout: the publisher did not answer in time. Args: Timeout,
	// the time allowed.
	ErrorTimeout ErrorKind = "timeout"
	// ErrorTLS: the publisher's certificate is not trusted.
	ErrorTLS ErrorKind = "tls"
	// ErrorPrivateAddress: the guard refused a loopback or private address
	// (UPCHECK_ALLOW_PRIVATE_SOURCES=1 allows them). Args: Address.
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
	// ErrorMalformed: the document is not a valid update document. Args:
	// Problem, what is wrong and where ("malformed JSON at line 3, column
	// 5: …").
	ErrorMalformed ErrorKind = "malformed"
	// ErrorRollback: the document is older than one already accepted.
	// Args: Sequences, its sequence and the stored one (RollbackArgs).
	ErrorRollback ErrorKind = "rollback"
	// ErrorNotModifiedUntrusted: a 304 for a stored document that is not
	// trusted under the key pinned now.
	ErrorNotModifiedUntrusted ErrorKind = "not_modified_untrusted"
	// ErrorKeyStatement: the document is not signed by the keys trusted
	// now, and the publisher's key statement (which could have endorsed
	// new keys) was refused. Args: Statement, why (a StatementRefusal:
	// not signed by the threshold of the keys trusted now, not newer than
	// the last accepted, with Sequences its version and the last one,
	// or malformed).
	ErrorKeyStatement ErrorKind = "key_statement"
	// ErrorNoSuchPackage: the npm registry has no such package (404).
	ErrorNoSuchPackage ErrorKind = "no_such_package"
	// ErrorCredentialsRefused: the npm registry refused the credentials
	// for the package (401, 403): the token is missing, wrong, or may not
	// read it. Args: Status, the status code.
	ErrorCredentialsRefused ErrorKind = "credentials_refused"
	// ErrorNoRegistry: no setting names the npm registry of the package
	// (UPCHECK_NPM_REGISTRY, or a registry line of UPCHECK_NPMRC).
	ErrorNoRegistry ErrorKind = "no_registry"
	// ErrorEvaluation: the document was read, but this component could not
	// be evaluated from it (its package is missing, a version does not
	// parse). A component's fact, not a source's: never stored in sources.
	ErrorEvaluation ErrorKind = "evaluation"
	// ErrorOther: anything else; the technical text says what.
	ErrorOther ErrorKind = "other"
)

// AllErrorKinds are the kinds, in this order.
func AllErrorKinds() []ErrorKind {
	return []ErrorKind{ErrorHTTPStatus, ErrorConnect, ErrorDNS, ErrorTimeout, ErrorTLS, ErrorPrivateAddress, ErrorTooLarge,
		ErrorRedirects, ErrorBadURL, ErrorUnsigned, ErrorBadSignature, ErrorPinnedKey, ErrorMalformed, ErrorRollback,
		ErrorNotModifiedUntrusted, ErrorKeyStatement, ErrorNoSuchPackage, ErrorCredentialsRefused, ErrorNoRegistry,
		ErrorEvaluation, ErrorOther}
}

// Distrusts reports whether a source's last failure of this kind makes its
// trust need a look (Summary.UntrustedSources, source_state.untrusted): a
// document refused for its signature, its key statement or a rollback.
func (k ErrorKind) Distrusts() bool {
	switch k {
	case ErrorUnsigned, ErrorBadSignature, ErrorKeyStatement, ErrorRollback:
		return true
	}
	return false
}

// ProblemSentence turns the stored kind of a failure (ErrorKind) and its
// arguments into a sentence: the one place that words a source's failure,
// on the pages (views' problem component shows the technical text behind
// it, never instead of it) and in notifications (which leave the technical
// text to the webhook payload). An unknown or empty kind (a failure
// recorded before kinds were stored) gets a general sentence, and a kind
// without its arguments a sentence without them.
func ProblemSentence(kind string, args FailureArgs) string {
	switch ErrorKind(kind) {
	case ErrorHTTPStatus:
		if args.Status == 0 {
			return "The publisher’s server answered with an error."
		}
		return fmt.Sprintf("The publisher’s server answered %d %s.", args.Status, http.StatusText(args.Status))
	case ErrorConnect:
		return "Could not connect to the publisher’s server, or the connection broke before it answered."
	case ErrorDNS:
		return "The publisher’s host name could not be found."
	case ErrorTimeout:
		if args.Timeout > 0 {
			return "Timed out after " + SecondsText(int(args.Timeout.Round(time.Second)/time.Second)) + ": the publisher did not answer in time."
		}
		return "Timed out: the publisher did not answer in time."
	case ErrorTLS:
		return "The publisher’s certificate is not trusted, so nothing was read from it."
	case ErrorPrivateAddress:
		addr := "The address"
		if args.Address != "" {
			addr += " " + args.Address
		}
		return addr + " is private (loopback or an internal network), and upcheck only fetches from public addresses unless allowed: set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it."
	case ErrorTooLarge:
		return "The document is larger than upcheck reads, so it was not read."
	case ErrorRedirects:
		return "The publisher redirected too many times, or to an address that is not http or https."
	case ErrorBadURL:
		return "The source’s address is not an http or https URL."
	case ErrorUnsigned:
		return "The document is not signed, but a key is pinned for this source."
	case ErrorBadSignature:
		return "The signature does not match the keys trusted for this source, so the document was refused."
	case ErrorPinnedKey:
		return "The key pinned for this source in the manifest is not a valid key."
	case ErrorMalformed:
		if args.Problem != "" {
			return "The document is malformed (" + args.Problem + ")."
		}
		return "The document is malformed."
	case ErrorRollback:
		if sq := args.Sequences; sq != nil {
			return fmt.Sprintf("The publisher sent an older document (sequence %d, after %d was accepted), which is refused: a replayed document could hide fixed vulnerabilities.", sq.Refused, sq.Accepted)
		}
		return "The publisher sent an older document than one already accepted, which is refused: a replayed document could hide fixed vulnerabilities."
	case ErrorNotModifiedUntrusted:
		return "The publisher answered “not modified”, but no stored document verifies under the key pinned now."
	case ErrorKeyStatement:
		const lead = "The document is not signed by the keys trusted for this source, and the publisher’s key statement was refused"
		switch {
		case args.Statement == StatementUnsigned:
			return lead + ": it is not signed by the keys trusted now, so the keys it names are not trusted."
		case args.Statement == StatementNotNewer && args.Sequences != nil:
			return fmt.Sprintf("%s: its version %d is not newer than version %d, already accepted (a replayed statement).", lead, args.Sequences.Refused, args.Sequences.Accepted)
		case args.Statement == StatementMalformed:
			return lead + ": it is not a valid key statement."
		}
		return lead + "."
	case ErrorNoSuchPackage:
		return "The npm registry has no such package: check the name, or that the registry named for its scope is the one the site installs from."
	case ErrorCredentialsRefused:
		text := "The npm registry refused the credentials for this package"
		if args.Status != 0 {
			text += fmt.Sprintf(" (%d %s)", args.Status, http.StatusText(args.Status))
		}
		return text + ": the token in UPCHECK_NPMRC is missing, wrong, or may not read it."
	case ErrorNoRegistry:
		return "No setting names the npm registry of this package: set UPCHECK_NPM_REGISTRY, or a registry line in the file UPCHECK_NPMRC names."
	case ErrorEvaluation:
		return "This component could not be evaluated from its publisher’s document."
	default:
		return "The last check of this source failed."
	}
}

// ShownFailure is the failure the pages show for a component: its source's
// last error with that error's kind, else why its document could not be
// evaluated (ErrorEvaluation); "" and "" when neither failed.
func ShownFailure(sourceError, sourceKind, evalError string) (text string, kind ErrorKind) {
	switch {
	case sourceError != "":
		return sourceError, ErrorKind(sourceKind)
	case evalError != "":
		return evalError, ErrorEvaluation
	}
	return "", ""
}

// FailureArgs are the arguments a failure's kind (ErrorKind) is worded
// with: stored as this JSON beside the kind (sources.last_error_args,
// feeds.last_error_args, the source.failing event's payload) and worded
// when read, by ProblemSentence and FeedProblemSentence alone, never
// stored as words nor as a formatted value read back. Each kind sets only
// the fields its comment names; the zero FailureArgs is none.
type FailureArgs struct {
	// Status is the HTTP status (ErrorHTTPStatus, ErrorCredentialsRefused).
	Status int `json:"status,omitempty"`
	// Timeout is the time allowed (ErrorTimeout), in nanoseconds in JSON.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Address is the private address refused (ErrorPrivateAddress).
	Address string `json:"address,omitempty"`
	// Problem is what is wrong and where, in the reader's own words
	// (ErrorMalformed; a feed's ErrorSchema, ErrorArchive, ErrorFeedDir).
	Problem string `json:"problem,omitempty"`
	// Sequences are the refused document's sequence and the one accepted
	// (ErrorRollback), or the refused key statement's version and the last
	// one accepted (ErrorKeyStatement, StatementNotNewer).
	Sequences *Sequences `json:"sequences,omitempty"`
	// Statement is why a key statement was refused (ErrorKeyStatement).
	Statement StatementRefusal `json:"statement,omitempty"`
	// Named and Max are how many records an osv-api feed's API named and
	// how many one sync fetches (ErrorTooManyRecords).
	Named int `json:"named,omitempty"`
	Max   int `json:"max,omitempty"`
	// StartedAt is when an interrupted sync started (ErrorInterrupted).
	StartedAt *time.Time `json:"started_at,omitempty"`
}

// Sequences are two numbers that should have risen and did not: the
// refused one and the one already accepted.
type Sequences struct {
	Refused  int64 `json:"refused"`
	Accepted int64 `json:"accepted"`
}

// StatementRefusal is why a publisher's key statement was refused
// (FailureArgs.Statement).
type StatementRefusal string

// The refusals of a key statement.
const (
	// StatementUnsigned: it is not signed by the threshold of the keys
	// trusted now.
	StatementUnsigned StatementRefusal = "signature"
	// StatementNotNewer: its version is not newer than the last accepted
	// (FailureArgs.Sequences).
	StatementNotNewer StatementRefusal = "version"
	// StatementMalformed: it is not a valid key statement.
	StatementMalformed StatementRefusal = "malformed"
)

// RollbackArgs are ErrorRollback's arguments: the refused document's
// sequence and the one already accepted.
func RollbackArgs(incoming, stored int64) FailureArgs {
	return FailureArgs{Sequences: &Sequences{Refused: incoming, Accepted: stored}}
}

// KeyStatementNotNewerArgs are ErrorKeyStatement's arguments for a
// statement not newer than the last one accepted.
func KeyStatementNotNewerArgs(version, last int64) FailureArgs {
	return FailureArgs{Statement: StatementNotNewer, Sequences: &Sequences{Refused: version, Accepted: last}}
}
