package npme2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/testing/wait"
)

// api is the site's `upcheck serve` and an API token of a viewer.
type api struct {
	s           *site
	base, token string
}

var servingRE = regexp.MustCompile(`msg=serving addr=(http://\S+)`)

// serveAPI starts `upcheck serve` and makes a viewer's API token.
func (s *site) serveAPI() *api {
	s.t.Helper()
	p := s.startIn("a long enough password\n", "user", "add", "--email", "viewer@example.test", "--role", "viewer")
	if code := p.wait(time.Minute); code != 0 {
		s.t.Fatalf("user add: exit %d", code)
	}
	out, code := s.run("token", "create", "--email", "viewer@example.test", "--read-only")
	if code != 0 {
		s.t.Fatalf("token create: exit %d", code)
	}
	a := &api{s: s, token: strings.TrimSpace(out)}
	serve := s.start("serve")
	wait.For(s.t, "serve to listen", serveWait, func() (bool, error) {
		select {
		case <-serve.done:
			return false, fmt.Errorf("serve exited (%d): %s", serve.code, serve.stderr.String())
		default:
		}
		m := servingRE.FindStringSubmatch(serve.stderr.String())
		if m == nil {
			return false, nil
		}
		a.base = m[1]
		return true, nil
	})
	return a
}

// get decodes the JSON answer of GET path into v.
func (a *api) get(path string, v any) {
	a.s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.s.t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		a.s.t.Fatalf("GET %s: %v", path, err)
	}
}
