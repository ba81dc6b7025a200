package web

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// The rows of the read model as the API encodes them: one JSON type per
// readmodel row, each with the one function that fills it, since the API's
// names and nulls are its contract (openapi.json), not the row's.

// catalogEntry is one component in GET /api/admin/plugins/updates.
type catalogEntry struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	Installed string `json:"installed"`
	// Evaluated: the facts below come from a result for the current
	// installed versions; false means nothing is known yet.
	Evaluated       bool    `json:"evaluated"`
	Latest          *string `json:"latest"`
	UpdateVersion   *string `json:"update_version"`
	UpdateAvailable bool    `json:"update_available"`
	Security        bool    `json:"security"`
	Vulnerable      bool    `json:"vulnerable"`
	// KnownExploited: an open advisory is exploited in the wild (KEV);
	// Malicious: one says the package is malicious (remove it).
	KnownExploited bool            `json:"known_exploited"`
	Malicious      bool            `json:"malicious"`
	NeedsNewerCore bool            `json:"needs_newer_core"`
	RequiredCore   *string         `json:"required_core,omitempty"`
	Advisories     json.RawMessage `json:"advisories"`
	SourceURL      *string         `json:"source_url"`
	// SourceKind is the source's kind (document, offline, npm) and Package
	// the npm package an npm source names; null: no source, or not npm.
	SourceKind *string `json:"source_kind"`
	Package    *string `json:"package"`
	ReleaseURL *string `json:"release_url,omitempty"`
	// UpdateCommand is how to install the update (npm install NAME@VERSION,
	// or a document's release URL); null: no update, or none to give.
	UpdateCommand *string `json:"update_command"`
	// FixVersion is the smallest release that clears the advisories (the
	// oldest one the hold allows and the installed core runs that clears
	// every advisory such a release clears), FixCommand how to install it;
	// null: none (docs/policy.md).
	FixVersion *string `json:"fix_version"`
	FixCommand *string `json:"fix_command"`
	// Deprecated is the publisher's deprecation message of the installed
	// version, ProvenanceLost the newer version published without the
	// provenance the installed one has; null: none.
	Deprecated     *string    `json:"deprecated"`
	ProvenanceLost *string    `json:"provenance_lost"`
	Stale          bool       `json:"stale"`
	LastSuccessAt  *time.Time `json:"last_success_at"`
	LastAttemptAt  *time.Time `json:"last_attempt_at"`
	LastError      *string    `json:"last_error"`
	EvalError      *string    `json:"eval_error,omitempty"`
	// LastErrorKind is the stable kind of the source's failure
	// (readmodel.ErrorKind), for scripts; omitted when none is stored.
	LastErrorKind *string `json:"last_error_kind,omitempty"`
	// SecuritySince is the exposure clock: since when this site has known
	// of the component's oldest open security problem; null: none.
	SecuritySince *time.Time `json:"security_since"`
	// DismissedAdvisories counts the advisories of the current evaluation
	// whose dismissal is in force (the status filter "dismissed"), and
	// DismissedUntil is the soonest end among them (null: none ends).
	DismissedAdvisories int        `json:"dismissed_advisories"`
	DismissedUntil      *time.Time `json:"dismissed_until"`
	// Policy is the component's policy, as the detail's (policyJSON);
	// null: every release is offered at once.
	Policy *policyJSON `json:"policy"`
	// What the policy held back (docs/policy.md; null: nothing): the
	// newest release waiting for its soak, the newest one the policy does
	// not offer and why, the skipped version that hides a release.
	// update_version is the offered update, after all of them.
	Waiting *readmodel.WaitingRelease `json:"waiting"`
	Held    *readmodel.HeldRelease    `json:"held"`
	Skipped *readmodel.SkippedVersion `json:"skipped"`
	// The trust downgrades besides provenance_lost: the offered version
	// published by an account new to the package, and a manifest sync that
	// lowered the trust of the source's pinned keys; null: none.
	NewPublisher *readmodel.NewPublisher `json:"new_publisher"`
	PinDowngrade *readmodel.PinDowngrade `json:"pin_downgrade"`
	// Brings are the signals of what the offered npm update brings
	// (docs/npm.md "What an update brings"), most pressing first; empty:
	// none.
	Brings []readmodel.Signal `json:"brings"`
}

// catalogBody is a catalog row as GET /api/admin/plugins/updates lists it.
func catalogBody(e readmodel.CatalogRow) catalogEntry {
	return catalogEntry{
		Code: e.Code, Name: e.Name, Installed: e.Installed, Evaluated: e.Evaluated, Latest: opt(e.Latest), UpdateVersion: opt(e.UpdateVersion),
		UpdateAvailable: e.UpdateAvailable, Security: e.Security, Vulnerable: e.Vulnerable, NeedsNewerCore: e.NeedsNewerCore,
		KnownExploited: e.KnownExploited, Malicious: e.Malicious,
		RequiredCore: opt(e.RequiredCore), Advisories: e.Advisories, SourceURL: opt(e.SourceURL),
		SourceKind: opt(string(kindOf(e.SourceURL, e.SourceKind))), Package: opt(e.Package), UpdateCommand: opt(e.UpdateCommand),
		FixVersion: opt(e.FixVersion), FixCommand: opt(e.FixCommand),
		Deprecated: opt(e.Deprecated), ProvenanceLost: opt(e.ProvenanceLost), ReleaseURL: opt(e.ReleaseURL), Stale: e.Stale, LastSuccessAt: e.LastSuccessAt, LastAttemptAt: e.LastAttemptAt,
		LastError: opt(e.LastError), EvalError: opt(e.EvalError), LastErrorKind: opt(e.LastErrorKind), SecuritySince: e.SecuritySince,
		DismissedAdvisories: e.Dismissed, DismissedUntil: e.DismissedUntil, Policy: catalogPolicy(e.Policy),
		Waiting: e.Waiting, Held: e.Held, Skipped: e.Skipped, NewPublisher: e.NewPublisher, PinDowngrade: e.PinDowngrade,
		Brings: append([]readmodel.Signal{}, e.Brings...),
	}
}

// catalogPolicy is a stored policy (its canonical text) as the API shows
// it; nil, null, for none or for a text that cannot be read.
func catalogPolicy(text string) *policyJSON {
	p, err := release.ParsePolicyText(text)
	if err != nil || p.IsZero() {
		return nil
	}
	body := policyBody(p)
	return &body
}

// kindOf is a source's kind as its row has it, or as its address says
// (readmodel.SourceKindOf) for a row read without it; "" without a source.
func kindOf(url string, kind readmodel.SourceKind) readmodel.SourceKind {
	if kind != "" || url == "" {
		return kind
	}
	return readmodel.SourceKindOf(url)
}

// runJSON is one row of the check history: one run, or refusals folded
// together (repeats of them; first_started_at the first one's start, the
// other members the newest one's).
type runJSON struct {
	ID             int64      `json:"id"`
	Trigger        string     `json:"trigger"`
	Actor          *string    `json:"actor"`
	Status         string     `json:"status"`
	StartedAt      time.Time  `json:"started_at"`
	FirstStartedAt time.Time  `json:"first_started_at"`
	Repeats        int        `json:"repeats"`
	FinishedAt     *time.Time `json:"finished_at"`
	DurationMS     int64      `json:"duration_ms"`
	Fetched        int        `json:"fetched"`
	NotModified    int        `json:"not_modified"`
	Failed         int        `json:"failed"`
	Skipped        int        `json:"skipped"`
	Error          *string    `json:"error"`
}

// runBody is a history row as GET /api/admin/history lists it.
func runBody(r readmodel.RunRow) runJSON {
	return runJSON{ID: r.ID, Trigger: r.Trigger, Actor: opt(r.Actor), Status: readmodel.ShownRunStatus(r.Status, r.Trigger), StartedAt: r.StartedAt,
		FirstStartedAt: r.FirstStartedAt, Repeats: r.Repeats, FinishedAt: r.FinishedAt, DurationMS: r.DurationMS,
		Fetched: r.Fetched, NotModified: r.NotModified, Failed: r.Failed, Skipped: r.Skipped, Error: opt(r.Error)}
}

// sourceJSON is one source in use as Source health shows it.
type sourceJSON struct {
	URL string `json:"url"`
	// SourceKind is document, offline or npm; Package the npm package an
	// npm source names, Registry its registry's URL (null for other
	// kinds), RegistryKeys the ids of the registry's pinned signing keys
	// and KeysChangedAt when they last changed after first sight (null:
	// never).
	SourceKind          string     `json:"source_kind"`
	Package             *string    `json:"package"`
	Registry            *string    `json:"registry"`
	RegistryKeys        []string   `json:"registry_keys"`
	KeysChangedAt       *time.Time `json:"keys_changed_at"`
	Components          int        `json:"components"`
	Offline             bool       `json:"offline"`
	HasDocument         bool       `json:"has_document"`
	LastSuccessAt       *time.Time `json:"last_success_at"`
	LastAttemptAt       *time.Time `json:"last_attempt_at"`
	LastError           *string    `json:"last_error"`
	LastErrorKind       *string    `json:"last_error_kind"`
	Problem             *string    `json:"problem"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	DocumentExpiresAt   *time.Time `json:"document_expires_at"`
	Expired             bool       `json:"expired"`
	Stale               bool       `json:"stale"`
	Failing             bool       `json:"failing"`
	SignatureState      string     `json:"signature_state"`
	Trust               trustJSON  `json:"trust"`
}

// trustJSON is a source's trust: its pin, the keys trusted now and where
// they came from, the stored document's sequence and what verified it.
type trustJSON struct {
	Pin          *string  `json:"pin"`
	TrustedKeys  int      `json:"trusted_keys"`
	KeyStatement int64    `json:"key_statement"`
	Sequence     *int64   `json:"sequence"`
	VerifiedBy   []string `json:"verified_by"`
	Untrusted    bool     `json:"untrusted"`
}

// sourceBody is a source as GET /api/admin/sources lists it.
func sourceBody(src readmodel.SourceRow) sourceJSON {
	out := sourceJSON{URL: src.URL, SourceKind: string(kindOf(src.URL, src.Kind)), Package: opt(src.Package), Registry: opt(src.Registry),
		RegistryKeys: src.RegistryKeys, KeysChangedAt: src.KeysChangedAt, Components: src.Components, Offline: src.Offline, HasDocument: src.HasDocument,
		LastSuccessAt: src.LastSuccessAt, LastAttemptAt: src.LastAttemptAt, LastError: opt(src.LastError),
		LastErrorKind: opt(src.LastErrorKind), ConsecutiveFailures: src.ConsecutiveFailures, DocumentExpiresAt: src.ExpiresAt,
		Expired: src.Expired, Stale: src.Stale, Failing: src.Failing, SignatureState: src.SignatureState,
		Trust: trustJSON{Pin: opt(src.Pin), TrustedKeys: src.TrustedCount, KeyStatement: src.KeyVersion, Sequence: src.Sequence,
			VerifiedBy: src.VerifiedBy, Untrusted: src.Untrusted}}
	if out.Trust.VerifiedBy == nil {
		out.Trust.VerifiedBy = []string{}
	}
	if out.RegistryKeys == nil {
		out.RegistryKeys = []string{}
	}
	if src.LastError != "" {
		p := readmodel.ProblemSentence(src.LastErrorKind, src.LastErrorArgs)
		out.Problem = &p
	}
	return out
}

// channelJSON is one channel. Target is notify.ShownTarget's form except
// in the answer that creates the channel, which has the target whole and,
// for a webhook, its signing secret: the only time either is shown.
type channelJSON struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Kind           string    `json:"kind"`
	Target         string    `json:"target"`
	Events         string    `json:"events"`
	MinEPSS        *float64  `json:"min_epss"`
	Enabled        bool      `json:"enabled"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
	// Scope is local, sites or fleet; Sites the names of a channel of
	// some sites (empty for the others).
	Scope string   `json:"scope"`
	Sites []string `json:"sites"`
}

// channelBody is a channel as the API shows it to a reader who may
// manage channels (admin) or not.
func channelBody(ch readmodel.ChannelRow, admin bool) channelJSON {
	return channelJSON{ID: ch.ID, Name: ch.Name, Kind: ch.Kind, Target: notify.ShownTarget(ch.Kind, ch.Target, admin),
		Events: ch.Events, MinEPSS: ch.MinEPSS, Enabled: ch.Enabled, DisabledReason: opt(ch.DisabledReason), CreatedAt: ch.CreatedAt,
		Scope: string(ch.Scope), Sites: orNone(ch.Sites)}
}

// orNone is names, or an empty list for none (JSON [] rather than null).
func orNone(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

// deliveryJSON is one event queued for a channel.
type deliveryJSON struct {
	ID            uuid.UUID  `json:"id"`
	ChannelID     int64      `json:"channel_id"`
	ChannelName   string     `json:"channel_name"`
	Type          string     `json:"type"`
	Key           string     `json:"key"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	LastError     *string    `json:"last_error"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	CreatedAt     time.Time  `json:"created_at"`
}

// deliveryBody is a delivery as GET /api/admin/notifications/deliveries
// lists it.
func deliveryBody(e readmodel.DeliveryRow) deliveryJSON {
	return deliveryJSON{ID: e.ID, ChannelID: e.ChannelID, ChannelName: e.ChannelName, Type: e.Type, Key: e.Key,
		State: e.State, Attempts: e.Attempts, LastError: opt(e.LastError), LastAttemptAt: e.LastAttemptAt,
		NextAttemptAt: e.NextAttemptAt, DeliveredAt: e.DeliveredAt, CreatedAt: e.CreatedAt}
}
