package config

import (
	"fmt"

	"github.com/upcheck/upcheck/internal/feed"
)

// readFeeds reads the advisory feeds' settings: UPCHECK_FEEDS
// ("osv=URL,kev=URL,epss=URL"; osv-api=URL instead of osv), the feeds a
// check syncs daily (docs/feeds.md), none when unset; and UPCHECK_FEED_DIR,
// where an OSV archive is downloaded to be read (Config.FeedDir; the
// system's temporary directory when unset).
func (c *Config) readFeeds(getenv func(string) string) error {
	feeds, err := feed.ParseList(getenv("UPCHECK_FEEDS"))
	if err != nil {
		return fmt.Errorf("UPCHECK_FEEDS: %w (docs/feeds.md says where each feed is published)", err)
	}
	c.Feeds, c.FeedDir = feeds, getenv("UPCHECK_FEED_DIR")
	return nil
}
