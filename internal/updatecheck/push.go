package updatecheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// A registered site's push of its lockfile (docs/design.md "Many sites",
// PUT /api/sites/{site}/lockfile): that site's lockfile sync, refused or
// accepted whole, idempotent by content.

// PushFiles are the names a pushed lockfile may have (the push's
// ?name=), each saying its kind as a lockfile sync reads it.
var PushFiles = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml"}

// ErrPushName refuses a push whose file name is none of PushFiles.
var ErrPushName = errors.New("the lockfile's name is package-lock.json, npm-shrinkwrap.json or pnpm-lock.yaml")

// ErrPushInvalid wraps a refusal of the pushed lockfile's content: the
// lockfile reader's (lockfile.ErrInvalid), saying where it failed.
var ErrPushInvalid = lockfile.ErrInvalid

// PushMaxSize caps a pushed lockfile as a lockfile read from disk is
// (lockfile.MaxSize).
const PushMaxSize = lockfile.MaxSize

// PushReport says what a push did.
type PushReport struct {
	Site string `json:"site"`
	File string `json:"file"`
	TreeReport
	// Components is what the push changed in the site's components (its
	// direct dependencies, as a lockfile sync chooses them with no
	// options), and how many of them were evaluated from the documents
	// already stored (Reevaluated); zero when the bytes were the stored
	// ones.
	Components SyncReport `json:"components"`
	// PushedAt is sites.pushed_at as this push wrote it.
	PushedAt time.Time `json:"pushed_at"`
	// Evaluated: the changed tree's findings were evaluated before the
	// answer (false: a check or a feed sync held the lease, and evaluates
	// them, or the next one does; or the tree did not change).
	Evaluated bool `json:"evaluated"`
}

// pushAttempts bounds the writes of one push racing another push of the
// same site (store.ErrTreeMoved): each reads the state again.
const pushAttempts = 3

// Push stores body, the lockfile named name that site pushed, as site's
// components and installed tree: parsed whole first (lockfile.ErrInvalid:
// nothing is written), then written as a lockfile sync writes them, in
// one transaction under the lease's lock: the components as the manifest
// sync makes them (syncComponentsTx: its direct dependencies, each its
// npm package's component, under the site's policy, read under the lock:
// SetSitePolicy) and the tree
// (store.Tx.TreeWrite, from the state read before: a check's fenced
// writes see the old inventory or the new one, never a mix), with
// sites.pushed_at and the push's audit row (site.push). The same bytes
// as the stored tree's file write nothing but pushed_at and the audit
// row. Components added or changed are then evaluated from the documents
// already stored (no fetch: a package another site uses was read for it),
// and a changed tree's findings before Push returns when the lease is
// free (EvaluateTree: the versions already matched for another site cost
// no matching).
func (c *Checker) Push(ctx context.Context, site store.Site, name string, body []byte) (PushReport, error) {
	rep := PushReport{Site: site.Name, File: name}
	if !validPushName(name) {
		return rep, ErrPushName
	}
	if len(body) > lockfile.MaxSize {
		return rep, fmt.Errorf("%w: %s is larger than %d bytes", lockfile.ErrInvalid, name, lockfile.MaxSize)
	}
	sum := sha256.Sum256(body)
	push := store.SitePush{Site: site.Name, File: name, Sha256: hex.EncodeToString(sum[:])}
	var l *lockfile.Lockfile
	for attempt := 1; ; attempt++ {
		st, _, err := c.store.TreeState(ctx, site.ID)
		if err != nil {
			return rep, err
		}
		if st.Epoch != 0 && bytes.Equal(st.FileHash, sum[:]) && st.Path == name {
			// The bytes stored: not even parsed again.
			push.Unchanged = true
			err = c.store.WithTx(ctx, func(tx *store.Tx) error {
				rep.PushedAt, err = tx.SitePushed(ctx, site.ID, push)
				return err
			})
			rep.Packages, rep.Unchanged = st.Packages, true
			return rep, err
		}
		if l == nil {
			if l, err = lockfile.Parse(name, body, lockfile.Options{}); err != nil {
				return rep, err
			}
		}
		before, err := c.store.Components(ctx, site.ID)
		if err != nil {
			return rep, err
		}
		w := &store.TreeWrite{Site: site.ID, Path: name, FileHash: sum, Tree: l.Tree, Components: headComponents(l.Tree, l.Manifest),
			Epoch: st.Epoch}
		if err := w.Prepare(); err != nil {
			return rep, err
		}
		if c.beforePushWrite != nil {
			c.beforePushWrite()
		}
		err = c.lease.WithLock(ctx, func(tx *store.Tx) error {
			// The site's policy as it stands under the lock, which a change
			// of it takes too (SetSitePolicy): the components are written
			// under the policy of the moment, never one replaced meanwhile.
			text, err := tx.SitePolicy(ctx, site.ID)
			if err != nil {
				return err
			}
			if l.Manifest.Policy, err = release.ParsePolicyText(text); err != nil {
				return err
			}
			if rep.Components, err = c.syncComponentsTx(ctx, tx, site.ID, l.Manifest, before); err != nil {
				return err
			}
			out, err := tx.TreeWrite(ctx, w)
			if err != nil {
				return err
			}
			push.Written = out
			rep.PushedAt, err = tx.SitePushed(ctx, site.ID, push)
			return err
		})
		if errors.Is(err, store.ErrTreeMoved) && attempt < pushAttempts {
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("push of %s: %w", site.Name, err)
		}
		break
	}
	c.reads.Changed()
	// The site's counts of its components, once its evaluation is done.
	ctx, countSites := c.withCounts(ctx)
	defer countSites()
	countsDue(ctx, site.ID)
	c.evaluatePush(ctx, site, name, l, push.Written, &rep)
	return rep, nil
}

// evaluatePush completes rep with what an accepted push wrote (out) and
// evaluates it: the components it added or changed from the stored
// documents, its tree's findings when the tree changed. What is not
// evaluated here (the lease busy, an error) the next check evaluates.
func (c *Checker) evaluatePush(ctx context.Context, site store.Site, name string, l *lockfile.Lockfile, out store.TreeWritten, rep *PushReport) {
	rep.TreeReport = TreeReport{Packages: len(l.Tree.Packages), TreeChange: out.Change()}
	if rep.Components.Added+rep.Components.Changed > 0 {
		n, err := NewSyncer(c).evaluateStored(ctx, site.ID)
		if err != nil {
			// The components are stored: the next check evaluates them.
			c.logger.WarnContext(ctx, "the pushed components were not evaluated; the next check evaluates them",
				"site", site.Name, "error", err)
		}
		rep.Components.Reevaluated = n
	}
	c.logger.InfoContext(ctx, "site pushed its lockfile", "site", site.Name, "file", name, "packages", rep.Packages,
		"unchanged", rep.Unchanged, "added", rep.Added, "changed", rep.Changed, "removed", rep.Removed,
		"components", rep.Components.Components, "components_added", rep.Components.Added,
		"components_changed", rep.Components.Changed, "components_removed", rep.Components.Removed)
	if !out.Unchanged {
		evaluated, err := c.EvaluateTree(ctx)
		if err != nil {
			// The tree is stored: the next check evaluates it.
			c.logger.WarnContext(ctx, "the pushed tree's findings were not evaluated; the next check evaluates them",
				"site", site.Name, "error", err)
		}
		rep.Evaluated = evaluated
	}
}

func validPushName(name string) bool {
	for _, f := range PushFiles {
		if name == f {
			return true
		}
	}
	return false
}
