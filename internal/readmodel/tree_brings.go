package readmodel

import (
	"time"
)

// ChangeState is how far what a lockfile change brought was read
// (docs/npm.md "What a lockfile change brought").
type ChangeState string

// The states of a lockfile change.
const (
	// ChangePending: the next check reads it.
	ChangePending ChangeState = "pending"
	// ChangeRead: its signals say what it brought (none: nothing).
	ChangeRead ChangeState = "read"
	// ChangeUnread: a check could not read it (Unread says why); a later
	// check reads it again while the version is installed.
	ChangeUnread ChangeState = "unread"
)

// ChangeStates are the states, in the order of their constants.
func ChangeStates() []ChangeState {
	return []ChangeState{ChangePending, ChangeRead, ChangeUnread}
}

// PackageChange is one version of a package a lockfile change installed
// and what it brought: the diff of the version it replaced (Compared)
// against it, or, for a package newly brought in (Compared ""), its own
// install scripts, exotic sources and age.
type PackageChange struct {
	Version string `json:"version"`
	// Previous are the versions of the package the same lockfile sync
	// removed; Compared the one diffed against ("" when none: a package
	// newly brought in, or not read yet).
	Previous    []string    `json:"previous"`
	Compared    string      `json:"compared"`
	InstalledAt time.Time   `json:"installed_at"`
	State       ChangeState `json:"state"`
	// Unread is why a check could not read it (UnreadPastBound,
	// UnreadFailed); "" otherwise.
	Unread UnreadReason `json:"unread,omitempty"`
	// Signals are what it brought, most pressing first (SignalText words
	// each); UnreadDependencies the registry dependencies it adds whose
	// package's age is not known (UnreadText).
	Signals            []Signal           `json:"signals"`
	UnreadDependencies []UnreadDependency `json:"unread_dependencies"`
	ReadAt             *time.Time         `json:"read_at"`
}

// ChangeText says what a lockfile change did: "1.0.0 → 1.1.0" for a
// changed version, "brought in 4.2.1" for a package newly brought in.
func ChangeText(c PackageChange) string {
	switch {
	case c.Compared != "":
		return c.Compared + " → " + c.Version
	case len(c.Previous) > 0:
		return c.Previous[len(c.Previous)-1] + " → " + c.Version
	}
	return "brought in " + c.Version
}

// ChangeReadText says what is known of what a change brought when it
// raised no signal: never "nothing" of a change that was not read.
func ChangeReadText(c PackageChange) string {
	switch c.State {
	case ChangeRead:
		if len(c.Signals) == 0 && len(c.UnreadDependencies) == 0 {
			return "It brought none of the signals upcheck reads (install scripts, outside sources, lower trust, young dependencies, a burst)."
		}
		return ""
	case ChangeUnread:
		switch c.Unread {
		case UnreadPastBound:
			return "Not read: the check had read as many changed packages' documents as it may; a later check reads it."
		default:
			return "Not read: its package document could not be read; the next check tries again."
		}
	}
	return "Not read yet: the next check reads what it brought."
}
