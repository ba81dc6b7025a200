// The words of a source's trust on the Sources page: which keys verified
// its document, how many are trusted, its sequence and expiry ("verified
// by key ab12cd34…ef01 (of 2 trusted), sequence 41, expires in 6 days"),
// and what needs a look, in plain words. The facts are the read model's
// (source_state); a key is always shown by its short form
// (updatedoc.Fingerprint).

package views

import (
	"fmt"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// trustLine is the source's trust in one line.
func trustLine(s readmodel.SourceRow, now time.Time) string {
	var parts []string
	switch {
	case s.Pin == "":
		parts = append(parts, "unsigned (no key pinned)")
	case readmodel.TrustState(s.SignatureState) == readmodel.TrustVerified && len(s.VerifiedBy) > 0:
		keys := "key " + s.VerifiedBy[0]
		if len(s.VerifiedBy) > 1 {
			keys = "keys " + strings.Join(s.VerifiedBy[:len(s.VerifiedBy)-1], ", ") + " and " + s.VerifiedBy[len(s.VerifiedBy)-1]
		}
		parts = append(parts, fmt.Sprintf("verified by %s (of %d trusted)", keys, s.TrustedCount))
	case readmodel.TrustState(s.SignatureState) == readmodel.TrustVerified:
		parts = append(parts, fmt.Sprintf("verified (%s)", countNoun(s.TrustedCount, "key trusted", "keys trusted")))
	default:
		parts = append(parts, fmt.Sprintf("no verified document yet (%s)", countNoun(s.TrustedCount, "key trusted", "keys trusted")))
	}
	if s.Pin != "" && s.KeyVersion > 0 {
		parts = append(parts, fmt.Sprintf("keys from key statement %d", s.KeyVersion))
	}
	if s.Sequence != nil {
		parts = append(parts, fmt.Sprintf("sequence %d", *s.Sequence))
	}
	if s.ExpiresAt != nil {
		if s.Expired {
			parts = append(parts, "expired "+readmodel.AgoText(now, *s.ExpiresAt))
		} else {
			parts = append(parts, "expires "+readmodel.AgoText(now, *s.ExpiresAt))
		}
	}
	return strings.Join(parts, ", ")
}

// trustWarnings are what needs a look about the source's trust, in plain
// words; none when all is well.
func trustWarnings(s readmodel.SourceRow, now time.Time) []string {
	var out []string
	switch {
	case s.ExpiresAt != nil && s.Expired:
		out = append(out, "The document expired "+readmodel.AgoText(now, *s.ExpiresAt)+": it is stale, and the last good data is kept until the publisher publishes a new one.")
	case s.ExpiresAt != nil && s.ExpiresSoon: // the database's judgement, on its clock
		out = append(out, "The document expires "+readmodel.AgoText(now, *s.ExpiresAt)+": unless the publisher publishes a new one by then, it will be stale.")
	}
	if !s.Failing {
		return out
	}
	switch readmodel.ErrorKind(s.LastErrorKind) {
	case readmodel.ErrorRollback:
		if sq := s.LastErrorArgs.Sequences; sq != nil {
			out = append(out, fmt.Sprintf("A rollback was refused: the publisher sent sequence %d after %d was accepted.", sq.Refused, sq.Accepted))
		} else {
			out = append(out, "A rollback was refused: the publisher sent an older document than one already accepted.")
		}
	case readmodel.ErrorBadSignature, readmodel.ErrorUnsigned:
		out = append(out, "The last document was refused: it is not signed by the keys trusted for this source.")
	case readmodel.ErrorKeyStatement:
		out = append(out, "The publisher’s key statement was refused, so the keys it names are not trusted.")
	}
	return out
}

// expiryWarningText is readmodel.ExpiryWarning in words, "7 days".
var expiryWarningText = readmodel.DurationText(readmodel.ExpiryWarning)

// trustCountsText is Source health's trust line, counted from the sources
// listed by the read model's flags (site_source_state's untrusted and
// unsigned, which the site's summary counts too): "1 untrusted source · 3
// unsigned sources (no key pinned)". An unsigned source is not untrusted
// (nothing claims who wrote it), so both are said.
func trustCountsText(src []readmodel.SourceRow) string {
	untrusted, unsigned := 0, 0
	for _, s := range src {
		if s.Untrusted {
			untrusted++
		}
		if s.Unsigned {
			unsigned++
		}
	}
	return countNoun(untrusted, "untrusted source", "untrusted sources") + " · " +
		countNoun(unsigned, "unsigned source (no key pinned)", "unsigned sources (no key pinned)")
}
