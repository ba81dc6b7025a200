package feedsync

// The osv-api feed: a querybatch naming the installed versions.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
)

// maxAPIRecords is the most records an osv-api sync fetches one by one
// (docs/feeds.md, Limits): the querybatch answer names every advisory of
// every installed version, each a GET while the lease is held.
const maxAPIRecords = 1000

// apiTooManyError: the API named more records new or changed since stored
// than a sync fetches; the first max were fetched and stored.
type apiTooManyError struct{ named, max int }

func (e *apiTooManyError) Error() string {
	return fmt.Sprintf("the API named %d records new or changed since stored, more than the %d a sync fetches one by one; the first %d were stored",
		e.named, e.max, e.max)
}

// syncAPI queries an OSV-compatible API with the installed packages and
// versions, then fetches the records new or modified since stored.
func (s *Sync) syncAPI(ctx context.Context, l lease.Lease, run *feedRun) error {
	comps, err := s.store.FleetComponents(ctx)
	if err != nil {
		return err
	}
	qs, err := s.apiQueries(ctx, comps)
	if err != nil {
		return err
	}
	started := time.Now().UTC()
	api := feed.NewAPI(s.fetcher, run.fd.URL)
	answers, err := api.QueryBatch(ctx, qs)
	if err != nil {
		return err
	}
	seen := map[string]time.Time{}
	var ids []string
	for _, refs := range answers {
		for _, ref := range refs {
			if _, ok := seen[ref.ID]; !ok {
				ids = append(ids, ref.ID)
			}
			seen[ref.ID] = ref.Modified
		}
	}
	stored, err := s.store.OSVStoredModified(ctx, ids)
	if err != nil {
		return err
	}
	var todo []string
	for _, id := range ids {
		if at, ok := stored[id]; ok && !seen[id].After(at) {
			run.out.Unchanged++
			continue
		}
		todo = append(todo, id)
	}
	// Each is one GET under the lease: past the cap, the first ones are
	// fetched and stored, and the sync fails saying so; the next one finds
	// those stored and fetches the following ones.
	var over error
	if limit := s.apiMax; len(todo) > limit {
		over = &apiTooManyError{named: len(todo), max: limit}
		todo = todo[:limit]
	}
	var batch []store.OSVRecord
	for _, id := range todo {
		body, err := api.Vuln(ctx, id)
		if errors.Is(err, fetch.ErrTooLarge) {
			run.skip(id, "", err.Error())
			continue
		}
		if err != nil {
			return err
		}
		rec, ok := s.parseRecord(run, id, body)
		if !ok {
			continue
		}
		if batch = append(batch, rec); len(batch) == BatchSize {
			if err := s.storeRecords(ctx, l, run, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := s.storeRecords(ctx, l, run, batch); err != nil {
		return err
	}
	if over != nil {
		return over
	}
	run.out.Cursor = started.Format(time.RFC3339Nano)
	n, err := s.store.OSVCount(ctx)
	run.out.Records = n
	return err
}

// apiQueries are the package versions an osv-api sync asks about, each
// once: the components' installed versions, every installed package
// version of the tree, and the versions the tree had installed and no
// longer has (the look-back's: a record published after a version was
// removed still names it). feed.API.QueryBatch sends them in batches of
// feed.MaxBatch.
func (s *Sync) apiQueries(ctx context.Context, comps []store.Component) ([]feed.Query, error) {
	installed, err := s.store.TreeInstalledVersions(ctx)
	if err != nil {
		return nil, err
	}
	past, err := s.store.TreePastVersions(ctx)
	if err != nil {
		return nil, err
	}
	seen := make(map[feed.Query]bool, len(comps)+len(installed)+len(past))
	var qs []feed.Query
	add := func(name, version string) {
		q := feed.Query{Name: name, Version: version}
		if name != "" && !seen[q] {
			seen[q] = true
			qs = append(qs, q)
		}
	}
	for _, c := range comps {
		add(c.Package, c.InstalledVersion)
	}
	for _, p := range installed {
		add(p.Name, p.Version)
	}
	for _, p := range past {
		add(p.Name, p.Version)
	}
	return qs, nil
}
