package notify

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	htmltemplate "html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// eventAdvisory is the one advisory of an advisory event's payload.
type eventAdvisory struct {
	ID, Severity, Summary, Affected, URL string
	Aliases                              []string
	// ClearedBy: the oldest later release it does not affect.
	ClearedBy string `json:"cleared_by"`
}

// eventPayload is what the events' payloads hold (docs/notifications.md),
// as far as words need it: a message, a chat line.
type eventPayload struct {
	Component struct {
		Code, Name, Installed string
	} `json:"component"`
	Version string `json:"version"`
	// FixVersion (security_update.available): the smallest release that
	// clears the component's advisories, "" none.
	FixVersion string        `json:"fix_version"`
	Severity   string        `json:"severity"`
	Summary    string        `json:"summary"`
	URL        string        `json:"url"`
	Advisory   eventAdvisory `json:"advisory"`
	// Advisories are those a security update fixes (its component's
	// open advisories with a fix).
	Advisories          []advisoryRef         `json:"advisories"`
	Source              string                `json:"source"`
	FailingSince        *time.Time            `json:"failing_since"`
	LastError           string                `json:"last_error"` // for webhooks' machine readers; words use the kind
	LastErrorKind       string                `json:"last_error_kind"`
	LastErrorArgs       readmodel.FailureArgs `json:"last_error_args"`
	ConsecutiveFailures int                   `json:"consecutive_failures"`
	LastSuccessAt       *time.Time            `json:"last_success_at"`
	Components          []string              `json:"components"`
	LastCompletedAt     *time.Time            `json:"last_completed_at"`
	Message             string                `json:"message"`
	// npm events (docs/notifications.md): the package (a deprecation's
	// message is Message), the registry and its signing keys now and as
	// pinned before (registry_keys.changed).
	Package      string   `json:"package"`
	Registry     string   `json:"registry"`
	Keys         []string `json:"key_ids"`
	PreviousKeys []string `json:"old_key_ids"`
	// trust_downgrade: how trust went down (readmodel.TrustDowngradeKind),
	// the account new to the package (new_publisher), what a manifest
	// sync changed (pin: Source, Components, Reason).
	Kind    string `json:"kind"`
	Account string `json:"account"`
	Reason  string `json:"reason"`
	// Signal, for a trust_downgrade of what an update brings (kind a
	// readmodel.SignalKind), is the signal as stored; nil otherwise.
	Signal *readmodel.Signal `json:"signal"`
	// Tree: the signal is of a lockfile change (docs/npm.md "What a
	// lockfile change brought"), the version installed already; Compared
	// is the version it replaced ("" for a package newly brought in).
	Tree     bool   `json:"tree"`
	Compared string `json:"compared"`
	// Site names the registered site of the component, for a channel of
	// some sites; Sites and SiteCount are the fleet digest's (the first
	// readmodel.FleetSitesNamed sites by name, and how many there are);
	// "" and none for the local site's events.
	Site      string   `json:"site"`
	Sites     []string `json:"sites"`
	SiteCount int      `json:"site_count"`
}

// siteWords is what an event of a registered site's component says of
// its sites through word: a prefix ("site shop: ", "on 3 sites: ") and,
// for a digest, the list of sites ("a, b and 1 more"); "" for the local
// site's events.
func (p eventPayload) siteWords(word func(string, int) string) (prefix, list string) {
	if p.Site != "" {
		return sitePrefix(p.Site, word), ""
	}
	if len(p.Sites) == 0 {
		return "", ""
	}
	named := p.Sites[:min(len(p.Sites), readmodel.FleetSitesNamed)]
	names := make([]string, len(named))
	for i, s := range named {
		names[i] = word(s, chatNameMax)
	}
	count := max(p.SiteCount, len(p.Sites))
	return "on " + sitesCount(count) + ": ", readmodel.SiteListText(names, count)
}

// advisoryRef names an advisory: its id and other databases' ids for it.
type advisoryRef struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases"`
}

// problem is a failing source's last error in words: the sentence for its
// stored kind, never the technical text (a webhook's payload carries that).
func (p eventPayload) problem() string {
	return readmodel.ProblemSentence(p.LastErrorKind, p.LastErrorArgs)
}

// mailItem is one event in a message.
type mailItem struct {
	rank    int    // lower is worse: the subject names the worst item
	order   string // ties: by component, then key
	subject string // its words in a subject line
	Title   string
	Details []string
	URL     string // http or https only
	// AdminURL is the component's AdminCP page (UPCHECK_PUBLIC_URL set).
	AdminURL string
}

// Item ranks, lower first. The security items come in the summary's
// urgency order (readmodel.Urgency: an advisory with no fix, then a
// security update), each by severity (readmodel.Severity.Rank), then a
// trust downgrade and a deprecated version; then failing sources, a
// registry's changed keys, an overdue check, plain updates, tests.
var (
	rankAdvisory = 10 * readmodel.Urgency(readmodel.KindVulnerableNoFix)
	rankSecurity = 10 * readmodel.Urgency(readmodel.KindSecurity)
	rankLost     = 10 * readmodel.Urgency(readmodel.KindProvenanceLost)
	rankDepr     = 10 * readmodel.Urgency(readmodel.KindDeprecated)
	rankSource   = 10 * len(readmodel.AttentionKinds)
	rankKeys     = rankSource + 5
	rankOverdue  = rankSource + 10
	rankUpdate   = rankSource + 20
	rankTest     = rankSource + 30
	rankOther    = rankSource + 40
)

// sevRank places a severity within its type's ten ranks: 0 for critical,
// the worst, up to 4 for an unknown or empty one.
func sevRank(severity string) int {
	return readmodel.SeverityCritical.Rank() - readmodel.Severity(severity).Rank()
}

// wordEvent words one event. Every string from a payload passes through
// clean: publishers write versions, summaries and URLs.
func wordEvent(e store.MessageEvent, publicURL string) mailItem {
	var p eventPayload
	if json.Unmarshal(e.Payload, &p) != nil {
		return mailItem{rank: rankOther, order: e.Key, subject: clean(e.Type, 60), Title: clean(e.Type, 60)}
	}
	name := clean(cmp.Or(p.Component.Name, p.Component.Code), 80)
	installed, version := clean(p.Component.Installed, 40), clean(p.Version, 40)
	it := mailItem{order: strings.ToLower(name) + "\x00" + e.Key}
	switch readmodel.EventType(e.Type) {
	case readmodel.EventSecurityUpdate:
		wordSecurityUpdate(&it, p, name, installed, version)
	case readmodel.EventAdvisoryUnfixed:
		wordAdvisoryUnfixed(&it, p.Advisory, name, installed)
	case readmodel.EventSourceFailing:
		wordSourceFailing(&it, p)
	case readmodel.EventCheckOverdue:
		it.rank = rankOverdue
		since := "ever"
		if p.LastCompletedAt != nil {
			since = "since " + readmodel.TimeText(*p.LastCompletedAt)
		}
		it.subject = "No update check has completed " + since
		it.Title = it.subject
		it.Details = []string{"Is upcheck serve running? `upcheck check` runs one now."}
	case readmodel.EventUpdateAvailable:
		it.rank = rankUpdate
		it.subject = "Update for " + name + ": " + version
		it.Title = "Update for " + name + ": " + installed + " → " + version
		it.URL = webURL(p.URL)
	case readmodel.EventMalicious, readmodel.EventKnownExploited:
		var intel struct {
			Advisory intelAdvisory `json:"advisory"`
		}
		_ = json.Unmarshal(e.Payload, &intel) // the payload decoded above; a KEV of another shape words nothing
		wordIntelEvent(&it, e.Type, p, intel.Advisory, name, installed)
	case readmodel.EventTreeExposed:
		wordExposed(&it, e.Payload)
	case readmodel.EventTreeFinding:
		wordTreeFinding(&it, e.Payload)
	case readmodel.EventFleetFinding:
		wordFleetFinding(&it, e.Payload)
	case readmodel.EventDeprecated, readmodel.EventRegistryKeysChanged:
		wordNpmEvent(&it, e.Type, p, name, installed, version)
	case readmodel.EventTrustDowngrade:
		wordTrustDowngrade(&it, p, name, installed, version)
	case readmodel.EventTest:
		it.rank, it.subject, it.Title = rankTest, "Test notification", "Test notification"
		it.Details = nonEmpty(clean(p.Message, 300))
	default:
		it.rank, it.subject, it.Title = rankOther, clean(e.Type, 60), clean(e.Type, 60)
	}
	if prefix, list := p.siteWords(clean); prefix != "" {
		it.subject, it.Title = prefix+it.subject, prefix+it.Title
		if list != "" {
			it.Details = append(it.Details, "Sites: "+list)
		}
	}
	it.AdminURL = eventURL(publicURL, e.Payload)
	return it
}

// wordSecurityUpdate words a security update: the advisories it fixes, and
// the release that clears them when it is not the one offered, or a
// warning when the update is a new major version.
func wordSecurityUpdate(it *mailItem, p eventPayload, name, installed, version string) {
	sev := clean(p.Severity, 20)
	it.rank = rankSecurity + sevRank(sev)
	it.subject = "Security update for " + name + ": " + version + paren(sev)
	it.Title = "Security update for " + name + ": " + installed + " → " + version + paren(sev)
	it.Details = nonEmpty(clean(p.Summary, 300))
	if ids := advisoryIDs(p.Advisories, clean); ids != "" {
		it.Details = append(it.Details, "Fixes: "+ids)
	}
	if fix := clean(p.FixVersion, 40); fix != "" && fix != version {
		s := readmodel.FixText(installed, fix, "", nil)
		it.Details = append(it.Details, strings.ToUpper(s[:1])+s[1:]+".")
	} else if readmodel.MajorJump(installed, version) {
		it.Details = append(it.Details, readmodel.VersionText(installed, version)+" is a new major version: read its notes before updating.")
	}
	it.URL = webURL(p.URL)
}

// wordAdvisoryUnfixed words an advisory affecting the installed version
// that no release fixes yet.
func wordAdvisoryUnfixed(it *mailItem, a eventAdvisory, name, installed string) {
	id, sev := advisoryIDs([]advisoryRef{{ID: a.ID, Aliases: a.Aliases}}, clean), clean(a.Severity, 20)
	it.rank = rankAdvisory + sevRank(sev)
	it.subject = "Unfixed advisory for " + name + " " + installed + ": " + id + paren(sev)
	it.Title = name + " " + installed + " is affected by " + id + paren(sev) + ", with no fix yet"
	it.Details = nonEmpty(clean(a.Summary, 300))
	if aff := clean(a.Affected, 80); aff != "" {
		it.Details = append(it.Details, "Affected versions: "+aff)
	}
	it.URL = webURL(a.URL)
}

// wordSourceFailing words a failing source: since when, its last error,
// its last good read and the components it serves.
func wordSourceFailing(it *mailItem, p eventPayload) {
	src := clean(p.Source, 200)
	it.rank, it.order = rankSource, src
	it.subject = "Update source failing: " + src
	it.Title = "Update source failing: " + src
	if p.FailingSince != nil {
		it.Details = append(it.Details, "Failing since "+readmodel.TimeText(*p.FailingSince)+" ("+
			strconv.Itoa(p.ConsecutiveFailures)+" failed attempts in a row)")
	}
	it.Details = append(it.Details, "Last error: "+clean(p.problem(), 400))
	if p.LastSuccessAt != nil {
		it.Details = append(it.Details, "Last read: "+readmodel.TimeText(*p.LastSuccessAt))
	} else {
		it.Details = append(it.Details, "Never read successfully")
	}
	if len(p.Components) > 0 {
		codes := make([]string, len(p.Components))
		for i, c := range p.Components {
			codes[i] = clean(c, 80)
		}
		it.Details = append(it.Details, "Components: "+clean(strings.Join(codes, ", "), 300))
	}
}

// mailContent is a message's words: its subject and both bodies.
type mailContent struct {
	Subject, Text, HTML string
}

// mailView is what the body templates show.
type mailView struct {
	Intro, Footer string
	Items         []mailItem
}

var (
	textBody = texttemplate.Must(texttemplate.New("text").Parse(`{{.Intro}}
{{range .Items}}
* {{.Title}}
{{- range .Details}}
  {{.}}
{{- end}}
{{- if .URL}}
  {{.URL}}
{{- end}}
{{- if .AdminURL}}
  In upcheck: {{.AdminURL}}
{{- end}}
{{end}}
-- 
{{.Footer}}
`))
	// html/template escapes every value: publisher-supplied text cannot
	// become markup, and an href that is not http(s) is defused.
	htmlBody = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html><body style="font-family: sans-serif; line-height: 1.4">
<p>{{.Intro}}</p>
<ul>
{{- range .Items}}
<li><strong>{{.Title}}</strong>{{range .Details}}<br>{{.}}{{end}}{{if .URL}}<br><a href="{{.URL}}">{{.URL}}</a>{{end}}{{if .AdminURL}}<br><a href="{{.AdminURL}}">In upcheck</a>{{end}}</li>
{{- end}}
</ul>
<p style="color: #666">{{.Footer}}</p>
</body></html>
`))
)

// composeMail words a message: the items worst first, a subject naming the
// worst ("and N more" when there are others), a plain text and an HTML body.
func composeMail(m store.Message, publicURL string) (mailContent, error) {
	items := make([]mailItem, len(m.Events))
	for i, e := range m.Events {
		items[i] = wordEvent(e, publicURL)
	}
	slices.SortStableFunc(items, func(a, b mailItem) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.order, b.order))
	})
	subject := "[upcheck] Notifications"
	if len(items) > 0 {
		subject = "[upcheck] " + items[0].subject
	}
	if len(items) > 1 {
		subject += " and " + strconv.Itoa(len(items)-1) + " more"
	}
	channel := clean(m.Channel.Name, 80)
	intro := "upcheck has 1 new notification for the channel “" + channel + "”:"
	if len(items) != 1 {
		intro = "upcheck has " + strconv.Itoa(len(items)) + " new notifications for the channel “" + channel + "”:"
	}
	v := mailView{Intro: intro, Items: items,
		Footer: "You receive this because your address is on upcheck's channel “" + channel + "” (upcheck notify list)."}
	var text, html bytes.Buffer
	if err := textBody.Execute(&text, v); err != nil {
		return mailContent{}, err
	}
	if err := htmlBody.Execute(&html, v); err != nil {
		return mailContent{}, err
	}
	return mailContent{Subject: subject, Text: text.String(), HTML: html.String()}, nil
}

// messageID is the message's Message-ID (without angle brackets), the same
// on every attempt: derived from its key (its events), its channel's id
// and its channel's creation time, which tells installations apart.
func messageID(m store.Message) string {
	sum := sha256.Sum256([]byte("upcheck message\x00" + strconv.FormatInt(m.Channel.ID, 10) + "\x00" +
		strconv.FormatInt(m.Channel.CreatedAt.UnixMicro(), 10) + "\x00" + m.Key))
	return hex.EncodeToString(sum[:]) + "@upcheck"
}

// clean makes untrusted text one safe line: control characters (line
// breaks, terminal escapes) and invisible format characters (bidi
// overrides, zero-width spaces) become spaces, runs of spaces one, and it is cut
// to max runes.
func clean(s string, max int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || isInvisible(r) }), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// webURL keeps an http or https URL, and drops anything else.
func webURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2000 {
		return ""
	}
	return clean(u.String(), 2000)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
