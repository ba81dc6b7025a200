package config

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/feed"
)

// UPCHECK_FEEDS configures the feeds; a list upcheck cannot use stops the
// start naming the setting and where the docs say each feed is published.
func TestFeedsSetting(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(map[string]string{"UPCHECK_FEEDS": "osv=https://mirror.test/npm/all.zip, kev=https://mirror.test/kev.json",
		"UPCHECK_FEED_DIR": "/var/tmp/upcheck"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Feeds) != 2 || c.Feeds[0].Kind != feed.KindOSV || c.Feeds[1].URL != "https://mirror.test/kev.json" || c.FeedDir != "/var/tmp/upcheck" {
		t.Errorf("feeds = %+v in %q", c.Feeds, c.FeedDir)
	}
	for _, bad := range []string{"osv=ftp://mirror.test/all.zip", "nvd=https://mirror.test/x.json", "kev=https://a.test/k.json,kev=https://b.test/k.json",
		"osv=https://a.test/all.zip,osv-api=https://a.test/", "kev=https://ops:s3cret@mirror.test/kev.json"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_FEEDS": bad})); err == nil || !strings.Contains(err.Error(), "UPCHECK_FEEDS") ||
			!strings.Contains(err.Error(), "docs/feeds.md") {
			t.Errorf("UPCHECK_FEEDS=%q: %v, want an error naming the setting and docs/feeds.md", bad, err)
		}
	}
}
