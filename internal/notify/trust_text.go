package notify

import (
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of trust_downgrade (docs/policy.md "Trust going down"), by
// its payload's kind: a manifest sync lowered a source's pin (pin), the
// offered npm version lost the provenance the installed version has
// (provenance_lost), or an account new to the package published it
// (new_publisher). The account is the publisher's text: cut, and in a
// chat quoted as code.

// wordTrustDowngrade words a trust_downgrade as a mail item; name,
// installed and version are already clean.
func wordTrustDowngrade(it *mailItem, p eventPayload, name, installed, version string) {
	it.rank = rankLost
	if p.Signal != nil && p.Tree {
		it.subject = "What the lockfile change to " + name + " " + version + " brought"
		it.Title = "Installed by a lockfile change, " + name + " " + version + ": " + clean(readmodel.SignalText(*p.Signal), 800)
		it.Details = []string{"A signal to check: the version is installed already; read what it brought."}
		return
	}
	if p.Signal != nil {
		it.subject = "What " + version + " of " + name + " brings"
		it.Title = "Before you install " + name + " " + version + ": " + clean(readmodel.SignalText(*p.Signal), 800)
		it.Details = []string{"A signal to check, not a block: read what it adds before you install it."}
		return
	}
	switch readmodel.TrustDowngradeKind(p.Kind) {
	case readmodel.DowngradePin:
		src := clean(p.Source, 200)
		it.order = src
		it.subject = "Trust downgrade for the source " + src
		it.Title = "Trust downgrade: a manifest sync lowered the trust of the source " + src
		if reason := clean(p.Reason, 400); reason != "" {
			it.Details = append(it.Details, "What changed: "+reason)
		}
		if codes := componentCodes(p.Components, clean); codes != "" {
			it.Details = append(it.Details, "Components: "+codes)
		}
		it.Details = append(it.Details, "Check that the manifest change was meant: its documents now need less to be trusted.")
	case readmodel.DowngradePublisher:
		account := clean(p.Account, 214)
		it.subject = "Trust downgrade for " + name + ": " + version + " by an account new to this package"
		it.Title = "Trust downgrade for " + name + ": " + readmodel.NewPublisherText(version, account)
		it.Details = []string{"Check that " + account + " may publish it before you install it."}
	default: // provenance_lost
		it.subject = "Trust downgrade for " + name + ": " + version + " has no provenance"
		it.Title = "Trust downgrade for " + name + ": " + lostText(version, installed)
		it.Details = []string{"Check who published " + version + " before you install it."}
	}
}

// trustChatText words a trust_downgrade for a chat; name, installed and
// version are already escaped.
func trustChatText(p eventPayload, name, installed, version string) string {
	if p.Signal != nil && p.Tree {
		return "upcheck: installed by a lockfile change, " + name + " " + version + ": " + chat(readmodel.SignalText(*p.Signal), chatSummaryMax)
	}
	if p.Signal != nil {
		return "upcheck: before you install " + name + " " + version + ": " + chat(readmodel.SignalText(*p.Signal), chatSummaryMax)
	}
	switch readmodel.TrustDowngradeKind(p.Kind) {
	case readmodel.DowngradePin:
		text := "upcheck: trust downgrade: a manifest sync lowered the trust of the source " + chat(p.Source, chatSourceMax)
		if reason := chat(p.Reason, chatSummaryMax); reason != "" {
			text += ": " + reason
		}
		if codes := componentCodes(p.Components, chat); codes != "" {
			text += " (components: " + codes + ")"
		}
		return text + ". Check that the manifest change was meant."
	case readmodel.DowngradePublisher:
		account := chatCode(p.Account, chatIDMax)
		if account == "" {
			account = "?"
		}
		return fmt.Sprintf("upcheck: trust downgrade for %s: %s; check who published it before you install it",
			name, readmodel.NewPublisherText(version, account))
	default:
		return fmt.Sprintf("upcheck: trust downgrade for %s: %s; check who published it before you install it",
			name, lostText(version, installed))
	}
}

// componentCodes is the codes, each through word, at most 20 named.
func componentCodes(codes []string, word func(string, int) string) string {
	out := make([]string, 0, len(codes))
	for i, c := range codes {
		if i == 20 {
			out = append(out, fmt.Sprintf("and %d more", len(codes)-i))
			break
		}
		if c := word(c, chatNameMax); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, ", ")
}
