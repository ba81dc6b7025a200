package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/keys"
)

func newKeys(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		pub, _, err := keys.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = pub.String()
	}
	return out
}

func TestPinOfSeveralKeys(t *testing.T) {
	t.Parallel()
	k := newKeys(t, 3)
	m, err := ParseYAML([]byte(fmt.Sprintf(`components:
  - {code: core, name: Core, version: 1.0.0}
  - code: blog
    name: Blog
    version: 2.3.0
    source: https://acme.example/updates.json
    keys: [%s, %s, %s]
    threshold: 2
  - {code: shop, name: Shop, version: 1.0.0, source: "https://acme.example/updates.json", keys: ["%s", "%s", "%s"], threshold: 2}
  - {code: news, name: News, version: 1.0.0, source: "https://news.example/u.json", key: "%s"}
`, k[0], k[1], k[2], k[2], k[0], k[1], k[0])))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := keys.NewKeySet(k, 2)
	if got := m.Components[1].Pin(); got != want.String() || !strings.HasPrefix(got, "2 of ed25519:") {
		t.Fatalf("pin = %q, want %q", got, want)
	}
	if m.Components[1].Pin() != m.Components[2].Pin() {
		t.Fatal("the same keys in another order are the same pin")
	}
	if m.Components[3].Pin() != k[0] || m.Components[0].Pin() != "" {
		t.Fatalf("one key stays its own text: %q; none is %q", m.Components[3].Pin(), m.Components[0].Pin())
	}
}

func TestPinRefusals(t *testing.T) {
	t.Parallel()
	k := newKeys(t, 3)
	entry := func(extra string) string {
		return `{"components":[{"code":"core","name":"Core","version":"1.0.0"},{"code":"a","name":"A","version":"1.0.0","source":"https://x/y",` + extra + `}]}`
	}
	list := func(keys ...string) string { return `["` + strings.Join(keys, `","`) + `"]` }
	cases := map[string]struct{ doc, want string }{
		"both":           {entry(`"key":"` + k[0] + `","keys":` + list(k[1])), "key and keys are both set"},
		"threshold high": {entry(`"keys":` + list(k[0], k[1]) + `,"threshold":3`), "threshold 3 is not between 1 and the number of keys (2)"},
		"threshold low":  {entry(`"keys":` + list(k[0], k[1]) + `,"threshold":-1`), "threshold -1"},
		"with key":       {entry(`"key":"` + k[0] + `","threshold":1`), "threshold goes with keys"},
		"duplicate":      {entry(`"keys":` + list(k[0], k[0])), "listed twice"},
		"bad key":        {entry(`"keys":` + list(k[0], "ed25519:nope")), "keys: keys[1]"},
		"alone":          {entry(`"threshold":1`), "threshold is set but no keys are"},
		"disagree": {`{"components":[{"code":"core","name":"Core","version":"1.0.0"},` +
			`{"code":"a","name":"A","version":"1.0.0","source":"https://x/y","keys":` + list(k[0], k[1]) + `,"threshold":2},` +
			`{"code":"b","name":"B","version":"1.0.0","source":"https://x/y","keys":` + list(k[0], k[1]) + `}]}`,
			`components[2] ("b"): pinned keys differ from another component with the same source`},
	}
	for name, c := range cases {
		if _, err := ParseJSON([]byte(c.doc)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
