package readmodel

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorKind is the stable kind of a source's last failure, stored in
// sources.last_error_kind when the failure is recorded (updatecheck
// classifies the typed error there) and worded by ProblemSentence, the one
// place that turns a kind into a sentence, for the pages and the
// notifications alike. The technical text stays beside it, in
// sources.last_error, for whoever needs the detail. The values are stored: add kinds, never rename one.
type ErrorKind string

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
	// ErrorKeyStatement: the document is not signed by the keys trusted
	// now, and the publisher's key statement (which could have endorsed
	// new keys) was refused. Arg: why, "signature" (not signed by the
	// threshold of the keys trusted now), "version 2 <= 3" (not newer than
	// the last accepted) or "malformed".
	ErrorKeyStatement ErrorKind = "key_statement"
	// ErrorNoSuchPackage: the npm registry has no such package (404).
	ErrorNoSuchPackage ErrorKind = "no_such_package"
	// ErrorCredentialsRefused: the npm registry refused the credentials
	// for the package (401, 403): the token is missing, wrong, or may not
	// read it. Arg: the status code.
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
// argument into a sentence: the one place that words a source's failure,
// on the pages (views' problem component shows the technical text behind
// it, never instead of it) and in notifications (which leave the technical
// text to the webhook payload). An unknown or empty kind (a failure
// recorded before kinds were stored) gets a general sentence.
func ProblemSentence(kind, arg string) string {
	switch ErrorKind(kind) {
	case ErrorHTTPStatus:
		code, err := strconv.Atoi(arg)
		if err != nil {
			return "The publisher’s server answered with an error."
		}
		return fmt.Sprintf("The publisher’s server answered %d %s.", code, http.StatusText(code))
	case ErrorConnect:
		return "Could not connect to the publisher’s server, or the connection broke before it answered."
	case ErrorDNS:
		return "The publisher’s host name could not be found."
	case ErrorTimeout:
		if d, err := time.ParseDuration(arg); err == nil {
			return "Timed out after " + SecondsText(int(d.Round(time.Second)/time.Second)) + ": the publisher did not answer in time."
		}
		return "Timed out: the publisher did not answer in time."
	case ErrorTLS:
		return "The publisher’s certificate is not trusted, so nothing was read from it."
	case ErrorPrivateAddress:
		addr := "The address"
		if arg != "" {
			addr += " " + arg
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
		if arg != "" {
			return "The document is malformed (" + arg + ")."
		}
		return "The document is malformed."
	case ErrorRollback:
		text := "The publisher sent an older document than one already accepted, which is refused: a replayed document could hide fixed vulnerabilities."
		if older, newer, ok := RollbackSequences(arg); ok {
			text = fmt.Sprintf("The publisher sent an older document (sequence %s, after %s was accepted), which is refused: a replayed document could hide fixed vulnerabilities.", older, newer)
		}
		return text
	case ErrorNotModifiedUntrusted:
		return "The publisher answered “not modified”, but no stored document verifies under the key pinned now."
	case ErrorKeyStatement:
		const lead = "The document is not signed by the keys trusted for this source, and the publisher’s key statement was refused"
		v, last, isVersion := keyStatementVersions(arg)
		switch {
		case arg == "signature":
			return lead + ": it is not signed by the keys trusted now, so the keys it names are not trusted."
		case isVersion:
			return fmt.Sprintf("%s: its version %s is not newer than version %s, already accepted (a replayed statement).", lead, v, last)
		case arg == "malformed":
			return lead + ": it is not a valid key statement."
		}
		return lead + "."
	case ErrorNoSuchPackage:
		return "The npm registry has no such package: check the name, or that the registry named for its scope is the one the site installs from."
	case ErrorCredentialsRefused:
		text := "The npm registry refused the credentials for this package"
		if code, err := strconv.Atoi(arg); err == nil {
			text += fmt.Sprintf(" (%d %s)", code, http.StatusText(code))
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

// The arguments of two kinds name two values; each is written and read
// back here alone, so that the recording side (updatecheck) and the
// wording side (ProblemSentence, the source's trust lines) cannot drift.

// RollbackArg is ErrorRollback's argument: the refused document's
// sequence and the one already accepted, "41 < 42".
func RollbackArg(incoming, stored int64) string {
	return fmt.Sprintf("%d < %d", incoming, stored)
}

// RollbackSequences reads a RollbackArg back; ok is false for any other
// argument.
func RollbackSequences(arg string) (incoming, stored string, ok bool) {
	return strings.Cut(arg, " < ")
}

// KeyStatementVersionArg is ErrorKeyStatement's argument for a statement
// not newer than the last one accepted: "version 2 <= 3".
func KeyStatementVersionArg(version, last int64) string {
	return fmt.Sprintf("version %d <= %d", version, last)
}

// keyStatementVersions reads a KeyStatementVersionArg back.
func keyStatementVersions(arg string) (version, last string, ok bool) {
	_, err := fmt.Sscanf(arg, "version %s <= %s", &version, &last)
	return version, last, err == nil
}
