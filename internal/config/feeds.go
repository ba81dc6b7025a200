package config

// readFeeds reads the advisory feeds' settings: UPCHECK_FEEDS
// ("osv=URL,kev=URL,epss=URL"; osv-api=URL instead of osv), the feeds a
// check syncs daily (docs/feeds.md), none when unset, kept as written and
// read by feed.ParseList in internal/app (SettingsFrom); and
// UPCHECK_FEED_DIR, where an OSV archive is downloaded to be read
// (Config.FeedDir; the system's temporary directory when unset).
func (c *Config) readFeeds(getenv func(string) string) error {
	c.Feeds, c.FeedDir = getenv("UPCHECK_FEEDS"), getenv("UPCHECK_FEED_DIR")
	return nil
}
