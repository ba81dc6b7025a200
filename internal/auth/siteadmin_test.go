package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

// A site's push token: shown once at add and at rotate, stored as its
// SHA-256 alone, found by that hash; a rotation stops the old one at once,
// a removal stops the site's; the local site has none to rotate and stays.
func TestSitePushTokens(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()

	raw, site, err := b.svc.AddSite(ctx, "acme-shop", "  Acme Ltd ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, PushTokenPrefix) || site.Name != "acme-shop" || site.Owner != "Acme Ltd" || site.Local() || site.TokenMadeAt == nil {
		t.Fatalf("add: token %q, site %+v", raw, site)
	}
	var stored []byte
	if err := b.db.Pool.QueryRow(ctx, `SELECT token_hash FROM sites WHERE name = 'acme-shop'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(raw)); string(stored) != string(sum[:]) {
		t.Fatal("the stored hash is not the SHA-256 of the token shown")
	}
	var leaked int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM sites s, audit_log a WHERE strpos(s::text || a::text, $1) > 0`, raw).Scan(&leaked); err != nil || leaked != 0 {
		t.Fatalf("the raw token is stored somewhere: %d (%v)", leaked, err)
	}
	got, err := b.svc.AuthenticatePush(ctx, raw)
	if err != nil || got.ID != site.ID {
		t.Fatalf("push token of acme-shop: %+v, %v", got, err)
	}
	if _, _, err := b.svc.AddSite(ctx, "acme-shop", ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second acme-shop: %v, want ErrConflict", err)
	}
	for _, bad := range []string{"", "Acme", "-acme", "acme-", "acme_shop", strings.Repeat("a", 64)} {
		if _, _, err := b.svc.AddSite(ctx, bad, ""); !errors.Is(err, ErrInvalidSiteName) {
			t.Errorf("name %q: %v, want ErrInvalidSiteName", bad, err)
		}
	}
	if _, _, err := b.svc.AddSite(ctx, "ok", "a\nb"); !errors.Is(err, ErrInvalidSiteOwner) {
		t.Errorf("owner with a newline: %v", err)
	}

	// Rotate: the new token works, the old one no longer does.
	newRaw, _, err := b.svc.RotateSiteToken(ctx, "acme-shop")
	if err != nil || newRaw == raw {
		t.Fatalf("rotate: %v (same token: %v)", err, newRaw == raw)
	}
	if _, err := b.svc.AuthenticatePush(ctx, raw); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("the old token after a rotate: %v, want ErrUnauthenticated", err)
	}
	if got, err := b.svc.AuthenticatePush(ctx, newRaw); err != nil || got.Name != "acme-shop" {
		t.Fatalf("the new token: %+v, %v", got, err)
	}
	// An API token, a malformed one, and an unknown one push nothing.
	apiRaw := b.tokenFor(t, "admin@example.test")
	for _, bad := range []string{apiRaw, "ups_short", PushTokenPrefix + strings.Repeat("A", 43), ""} {
		if _, err := b.svc.AuthenticatePush(ctx, bad); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("push token %q: %v, want ErrUnauthenticated", bad, err)
		}
	}

	// The local site: nothing to rotate, never removed.
	if _, _, err := b.svc.RotateSiteToken(ctx, store.LocalSiteName); !errors.Is(err, ErrLocalSite) {
		t.Errorf("rotate local: %v", err)
	}
	if _, err := b.svc.RemoveSite(ctx, store.LocalSiteName); !errors.Is(err, ErrLocalSite) {
		t.Errorf("remove local: %v", err)
	}
	if _, err := b.svc.RemoveSite(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("remove an unknown site: %v", err)
	}
	if _, err := b.st.SiteByName(ctx, store.LocalSiteName, time.Hour); err != nil {
		t.Fatalf("the local site: %v", err)
	}

	// Remove: the site, its token and its history go; the local site's
	// history stays.
	b.exec(t, `INSERT INTO tree_versions (site_id, name, version, installed_at) VALUES ($1, 'debug', '4.4.2', clock_timestamp()), (1, 'debug', '4.4.1', clock_timestamp())`, site.ID)
	if _, err := b.svc.RemoveSite(ctx, "acme-shop"); err != nil {
		t.Fatal(err)
	}
	var left, local int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE site_id = $1), count(*) FILTER (WHERE site_id = 1) FROM tree_versions`, site.ID).Scan(&left, &local); err != nil || left != 0 || local != 1 {
		t.Fatalf("tree_versions after the removal: %d of the site, %d of local (%v)", left, local, err)
	}
	if _, err := b.svc.AuthenticatePush(ctx, newRaw); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("the token of a removed site: %v", err)
	}
	var actions []string
	rows, err := b.db.Pool.Query(ctx, `SELECT action FROM audit_log WHERE action LIKE 'site.%' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		actions = append(actions, a)
	}
	if want := []string{string(AuditSiteAdd), string(AuditSiteRotate), string(AuditSiteRemove)}; !slices.Equal(actions, want) {
		t.Fatalf("audit: %v, want %v", actions, want)
	}
}

// A registered site that has not pushed for the stale-after setting is
// stale (counted from its registration before its first push), the local
// site never; the words are readmodel's.
func TestSitesStale(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	for _, n := range []string{"fresh", "quiet", "new"} {
		if _, _, err := b.svc.AddSite(ctx, n, ""); err != nil {
			t.Fatal(err)
		}
	}
	b.exec(t, `UPDATE sites SET pushed_at = clock_timestamp() - interval '1 day' WHERE name = 'fresh'`)
	b.exec(t, `UPDATE sites SET pushed_at = clock_timestamp() - interval '9 days' WHERE name = 'quiet'`)
	sites, err := b.st.Sites(ctx, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stale := map[string]bool{}
	var names []string
	for _, s := range sites {
		names, stale[s.Name] = append(names, s.Name), s.Stale
	}
	if want := []string{"local", "fresh", "new", "quiet"}; !slices.Equal(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	if want := map[string]bool{"local": false, "fresh": false, "quiet": true, "new": false}; !maps(stale, want) {
		t.Fatalf("stale %v, want %v", stale, want)
	}
	// A day's setting: the site registered now is not stale yet, the one
	// that pushed a day ago is.
	b.exec(t, `UPDATE sites SET created_at = clock_timestamp() - interval '30 days' WHERE name = 'new'`)
	s, err := b.st.SiteByName(ctx, "new", 7*24*time.Hour)
	if err != nil || !s.Stale || s.PushedAt != nil {
		t.Fatalf("a site registered 30 days ago that never pushed: %+v, %v", s, err)
	}
}

func maps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Who sees what: a user limited to some sites carries them in its
// principal, by session and by token; a token limited further sees where
// both allow, and cannot be limited beyond its owner's sites; --all lets
// the user see every site again, at once on this instance.
func TestPrincipalSites(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PrincipalCacheTTL: time.Hour})
	ctx := context.Background()
	b.user(t, "viewer@example.test", RoleViewer)
	var ids = map[string]int64{"local": store.LocalSite}
	for _, n := range []string{"a", "b", "c"} {
		_, s, err := b.svc.AddSite(ctx, n, "")
		if err != nil {
			t.Fatal(err)
		}
		ids[n] = s.ID
	}
	sess, _ := b.login(t, "viewer@example.test")
	p, err := b.svc.Authenticate(ctx, sess)
	if err != nil || p.Sites.Limited() || !p.MaySee(store.LocalSite) || !p.MaySee(ids["c"]) {
		t.Fatalf("an unlimited viewer: %+v, %v", p.Sites, err)
	}

	if _, err := b.svc.SetUserSites(ctx, "viewer@example.test", false, []string{"a", "nope"}); !errors.Is(err, ErrUnknownSite) {
		t.Fatalf("an unknown site: %v", err)
	}
	if _, err := b.svc.SetUserSites(ctx, "viewer@example.test", false, nil); !errors.Is(err, ErrNoSites) {
		t.Fatalf("no site: %v", err)
	}
	us, err := b.svc.SetUserSites(ctx, "viewer@example.test", false, []string{"b", " a ", "a"})
	if err != nil || !us.Limited || !slices.Equal(us.Sites, []string{"a", "b"}) {
		t.Fatalf("set a,b: %+v, %v", us, err)
	}
	// The cached principal was dropped: the session sees the limit now.
	p, err = b.svc.Authenticate(ctx, sess)
	if err != nil || !p.Sites.Limited() || p.MaySee(store.LocalSite) || !p.MaySee(ids["a"]) || !p.MaySee(ids["b"]) || p.MaySee(ids["c"]) {
		t.Fatalf("a viewer limited to a, b: %v, %v", p.Sites.IDs(), err)
	}

	if _, _, err := b.svc.CreateTokenFor(ctx, TokenRequest{Email: "viewer@example.test", Sites: []string{"a", "c"}}); !errors.Is(err, ErrSitesBeyondOwner) {
		t.Fatalf("a token beyond its owner's sites: %v", err)
	}
	raw, tok, err := b.svc.CreateTokenFor(ctx, TokenRequest{Email: "viewer@example.test", Sites: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err = b.svc.AuthenticateToken(ctx, raw)
	if err != nil || !slices.Equal(p.Sites.IDs(), []int64{ids["b"]}) {
		t.Fatalf("a token limited to b: %v, %v", p.Sites.IDs(), err)
	}
	listed, err := b.svc.Token(ctx, tok.ID)
	if err != nil || !listed.SitesLimited {
		t.Fatalf("the token's listing: %+v, %v", listed, err)
	}
	names, err := b.svc.TokenSites(ctx)
	if err != nil || !slices.Equal(names[tok.ID], []string{"b"}) {
		t.Fatalf("token sites: %v, %v", names, err)
	}

	// The owner narrowed to a alone: the token limited to b sees nothing.
	if _, err := b.svc.SetUserSites(ctx, "viewer@example.test", false, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	p, err = b.svc.AuthenticateToken(ctx, raw)
	if err != nil || !p.Sites.Limited() || len(p.Sites.IDs()) != 0 {
		t.Fatalf("a token limited to b of an owner limited to a: %v, %v", p.Sites.IDs(), err)
	}
	// Every site again: the token sees b (its own limit), the session all.
	if us, err := b.svc.SetUserSites(ctx, "viewer@example.test", true, nil); err != nil || us.Limited || len(us.Sites) != 0 {
		t.Fatalf("all: %+v, %v", us, err)
	}
	p, err = b.svc.AuthenticateToken(ctx, raw)
	if err != nil || !slices.Equal(p.Sites.IDs(), []int64{ids["b"]}) {
		t.Fatalf("the token after all: %v, %v", p.Sites.IDs(), err)
	}
	p, err = b.svc.Authenticate(ctx, sess)
	if err != nil || p.Sites.Limited() {
		t.Fatalf("the session after all: %v, %v", p.Sites.IDs(), err)
	}
}

func (b *bundle) tokenFor(t *testing.T, email string) string {
	t.Helper()
	if _, err := b.st.UserByEmail(context.Background(), email); errors.Is(err, store.ErrNotFound) {
		b.user(t, email, RoleAdmin)
	}
	raw, err := b.svc.CreateToken(context.Background(), email, "t")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
