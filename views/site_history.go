package views

import (
	"strconv"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// SiteHistoryPath is a site's history: the check history for the local
// site (""), /sites/NAME/history for a registered one; page > 1 adds
// ?page=.
func SiteHistoryPath(site string, page int) string {
	p := PathHistory
	if site != "" {
		p = SitePath(site) + "/history"
	}
	if page > 1 {
		p += "?" + ParamPage + "=" + strconv.Itoa(page)
	}
	return p
}

// SiteHistoryProps is a registered site's history: its accepted pushes,
// newest first, a page of them; the refused push that stands, if any;
// and the fleet's check runs and feed syncs since it was registered.
type SiteHistoryProps struct {
	Layout LayoutProps
	// Refusal is the site's refused push that stands; nil when its last
	// push was accepted.
	Refusal *readmodel.InputRefusal
	Pushes  []readmodel.SitePushRow
	// Page is the page of pushes shown (from 1); More says an older page
	// exists.
	Page int
	More bool
	// Runs and FeedSyncs are the fleet's, started since the site was
	// registered, newest first.
	Runs      []readmodel.RunRow
	FeedSyncs []readmodel.FeedSyncRow
	// PushedAt is the site's last push accepted (nil: never), which the
	// empty list words when its audit row is past the log's retention.
	PushedAt *time.Time
}

// SitePushesPerPage is how many pushes a page of a site's history lists.
const SitePushesPerPage = 50
