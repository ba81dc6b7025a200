// Package catalog is the read side of the installed components: the
// summary and the catalog snapshot (every component with its flags,
// filtered, searched and paged in memory), one component's detail (the
// stored evaluation decoded, its dismissals marked), and the dismissals
// that admins decide. Everything it reads comes from the read model's SQL
// views through store; it fetches nothing and evaluates nothing.
//
// # When a cached read is dropped, and when it turns on its own
//
// Reads caches the summary, the local site's snapshot and the site
// switcher's sites (for a principal that sees every site), one value each
// per process, the fleet's pages, totals and impacts, one value per
// question asked (the principal's sites included), the last 64 of each,
// and the registered sites' snapshots, one per site, the last 16 sites
// asked (SiteSnapshot: each refreshed by age alone, as the fleet's).
// The rule, in full:
//
//   - Dropped at once by this process's own writes. Every writer tells the
//     reads after it wrote, through the one method Reads.Changed (which
//     updatecheck sees as its Reads interface): a check and an import when
//     they take the lease (check_running changed) and when they end,
//     whatever the outcome; a manifest sync when it ends, and a lockfile's
//     tree sync (the summary reads the tree's state); a dismissal and
//     the end of one (Dismissals); a site registered, given a new token
//     or removed from this process's pages or API. The next request then waits for a read
//     begun after the write, so this process never shows its own write
//     late, and a read begun before the write is never kept.
//   - Refreshed on its own by age. A value younger than readFresh (500 ms)
//     is served as it is; an older one is read again by one query in the
//     background while requests keep getting the value they had, as long
//     as it is younger than readMaxAge (1 s); an older one, or none, is
//     waited for. So every instance shows another instance's writes within
//     a second, and no request waits for the database while the cache is
//     in use.
//   - The snapshot turns only when the read model did. Past its freshness
//     the snapshot is first asked about, with one row: whether any write
//     to what the read model reads has committed since it was read
//     (read_model_version) or the clock has passed the moment it turns a
//     flag (upcheck_read_model_turns_at: a source going stale, a document
//     or a dismissal expiring). While neither happened, it is kept as if
//     read again.
//
// A component's detail is not cached: each request reads it.
package catalog
