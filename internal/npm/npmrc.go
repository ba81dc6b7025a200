package npm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/localfile"
)

// Token is a registry credential. It prints, formats and logs as
// "[redacted]", so that no error, log line or page can carry it by mistake;
// Reveal is the one way to its text, for the Authorization header. The text
// is behind a pointer so that a struct holding a Token prints an address,
// not the text, even where fmt cannot call String.
type Token struct{ text *string }

func (Token) String() string { return "[redacted]" }

// GoString keeps %#v from printing the text.
func (Token) GoString() string { return "npm.Token([redacted])" }

// LogValue keeps slog from printing the text.
func (Token) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Reveal returns the token's text.
func (t Token) Reveal() string {
	if t.text == nil {
		return ""
	}
	return *t.text
}

// IsZero reports whether there is no token.
func (t Token) IsZero() bool { return t.Reveal() == "" }

func newToken(text string) Token { return Token{text: &text} }

// Registries says which registry serves a package and with which token,
// as npm decides it: a scope's registry (@scope:registry=) before the
// default one (registry=), and the token of the longest "//host/path/"
// prefix of the request's address (//host/path/:_authToken=).
type Registries struct {
	Default *url.URL
	Scopes  map[string]*url.URL // "@acme" → its registry
	tokens  map[string]Token    // nerf dart ("//host/path/") → token
}

// ErrNoRegistry means a package was named whose registry no setting gives.
var ErrNoRegistry = errors.New("no npm registry is configured: set UPCHECK_NPM_REGISTRY to what `npm config get registry` prints on the site, or UPCHECK_NPMRC to the site's .npmrc")

// For returns the registry that serves name, or ErrNoRegistry.
func (r Registries) For(name Name) (*url.URL, error) {
	if u := r.Scopes[name.Scope()]; u != nil {
		return u, nil
	}
	if r.Default == nil {
		return nil, ErrNoRegistry
	}
	return r.Default, nil
}

// PackageURL is where the registry serves name's package document.
func (r Registries) PackageURL(name Name) (*url.URL, error) {
	reg, err := r.For(name)
	if err != nil {
		return nil, err
	}
	return reg.JoinPath(name.PathSegment()), nil
}

// Token returns the token npm would send with a request to u: that of u's
// folder, or of the nearest folder above it on the same host, or none.
func (r Registries) Token(u *url.URL) Token {
	dart := nerfDart(u)
	for {
		if t, ok := r.tokens[dart]; ok {
			return t
		}
		i := strings.LastIndexByte(strings.TrimSuffix(dart, "/"), '/')
		if i < 2 { // "//host/" was the last
			return Token{}
		}
		dart = dart[:i+1]
	}
}

// bearer is Token for a fetch: nil where npm sends no token.
func (r Registries) bearer(u *url.URL) fetch.Credential {
	if t := r.Token(u); !t.IsZero() {
		return t
	}
	return nil
}

// nerfDart is npm's key for a registry address: "//", the host (with its
// port) and the path up to its last slash, scheme, query and credentials
// dropped.
func nerfDart(u *url.URL) string {
	p := u.EscapedPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[:i+1]
	} else {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return "//" + strings.ToLower(u.Host) + p
}

// ParseRegistryURL reads a registry address as npm takes it: http or https,
// a host, no query or fragment; the path gets a trailing slash.
func ParseRegistryURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("the registry is not a URL") // the text may hold a credential
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		// Not quoted: "npmTOKEN:x" reads as a scheme.
		return nil, errors.New("the registry is not an http or https URL")
	}
	if u.Host == "" {
		return nil, errors.New("the registry URL has no host")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		// Not quoted: any part of it may hold a credential.
		return nil, errors.New("the registry URL has a query, a fragment or credentials: a token goes in the .npmrc as //host/path/:_authToken")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}

// envReference is ${NAME}, or ${NAME?} which may be unset.
var envReference = regexp.MustCompile(`\$\{([^${}?]+)(\?)?\}`)

// envName is what a variable's name looks like; a reference that is not one
// is not quoted in an error, as it may be a value written in the wrong place.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandable reports whether ${name} in an .npmrc is replaced from upcheck's
// environment: NPM_TOKEN, NODE_AUTH_TOKEN and the NPM_* names, the ones
// that hold npm tokens by convention. Any other variable is refused, so
// that a line of the site's file cannot send upcheck's own settings
// (UPCHECK_DATABASE_URL and its password, the SMTP password) to a host
// of its choosing as a token.
func expandable(name string) bool {
	return name == "NODE_AUTH_TOKEN" || strings.HasPrefix(name, "NPM_") && envName.MatchString(name)
}

// expandableWords names the variables expandable allows, for an error.
const expandableWords = "NPM_TOKEN, NODE_AUTH_TOKEN and other NPM_* variables"

// ParseNpmrc reads an .npmrc as npm reads the lines upcheck needs:
// "key = value" lines, ";" and "#" comments, quoted values, ${NAME}
// replaced from getenv when expandable(NAME) (${NAME?} may be unset and is
// then empty; an unset ${NAME} is an error, where npm would send the text
// as it is; any other NAME is an error). It keeps
// registry=, @scope:registry= and //host/path/:_authToken=; other keys
// are npm's business and are passed over. name is the file's name for
// the errors, which name the line and never a value.
func ParseNpmrc(r io.Reader, name string, getenv func(string) string) (Registries, error) {
	regs := Registries{Scopes: map[string]*url.URL{}, tokens: map[string]Token{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == ';' || text[0] == '#' || text[0] == '[' {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if !ok {
			continue // npm reads a bare key as true: no setting of ours
		}
		key, value = strings.TrimSpace(key), unquote(strings.TrimSpace(value))
		// An error names the file, the line and the key (an auth key's
		// host and path are no secret), never the value.
		fail := func(format string, args ...any) (Registries, error) {
			return Registries{}, fmt.Errorf("%s line %d (%s): %s", name, line, key, fmt.Sprintf(format, args...))
		}
		value, err := expandEnv(value, getenv)
		if err != nil {
			return fail("%v", err)
		}
		if err := regs.set(key, value); err != nil {
			return fail("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return Registries{}, fmt.Errorf("%s: %w", name, err)
	}
	return regs, nil
}

// expandEnv is an .npmrc value with its ${NAME} references replaced from
// getenv, as ParseNpmrc says; its error says which reference is refused or
// unset, never the value.
func expandEnv(value string, getenv func(string) string) (string, error) {
	var missing, refused string
	value = envReference.ReplaceAllStringFunc(value, func(ref string) string {
		m := envReference.FindStringSubmatch(ref)
		switch {
		case refused != "" || missing != "":
			return ""
		case !envName.MatchString(m[1]):
			refused = "a ${…} that is no variable's name"
			return ""
		case !expandable(m[1]):
			refused = "${" + m[1] + "}"
			return ""
		}
		v := getenv(m[1])
		if v == "" && m[2] == "" {
			missing = m[1]
		}
		return v
	})
	switch {
	case refused != "":
		return "", fmt.Errorf("upcheck replaces only %s in the .npmrc, not %s: give the token to upcheck in one of them", expandableWords, refused)
	case missing != "":
		return "", fmt.Errorf("the environment variable %s is not set (write ${%s?} if it may be)", missing, missing)
	}
	return value, nil
}

// set keeps key = value in r when key is one ParseNpmrc keeps (registry=,
// @scope:registry=, //host/path/:_authToken=) and passes over any other
// key; its error says what is wrong with the setting, never the value.
func (r *Registries) set(key, value string) error {
	switch {
	case key == "registry":
		u, err := ParseRegistryURL(value)
		if err != nil {
			return err
		}
		r.Default = u
	case strings.HasPrefix(key, "@") && strings.HasSuffix(key, ":registry"):
		scope := strings.TrimSuffix(key, ":registry")
		if _, err := ValidateName(scope + "/x"); err != nil {
			return fmt.Errorf("%q is not a scope", scope)
		}
		u, err := ParseRegistryURL(value)
		if err != nil {
			return err
		}
		r.Scopes[scope] = u
	case strings.HasPrefix(key, "//") && strings.HasSuffix(key, ":_authToken"):
		dart := strings.TrimSuffix(key, ":_authToken")
		if !strings.HasSuffix(dart, "/") {
			dart += "/"
		}
		if strings.Count(dart, "/") < 3 || len(dart) <= 3 {
			return errors.New("the key names no host")
		}
		if value == "" {
			return errors.New("the token is empty")
		}
		host, path, _ := strings.Cut(dart[2:], "/")
		r.tokens["//"+strings.ToLower(host)+"/"+path] = newToken(value)
	}
	return nil
}

// unquote strips the quotes npm's ini reader strips.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// LoadRegistries is the registries of upcheck's settings: the .npmrc at
// npmrc (UPCHECK_NPMRC) when given, and registry (UPCHECK_NPM_REGISTRY),
// which when given is the default registry whatever the file says.
func LoadRegistries(registry, npmrc string, getenv func(string) string) (Registries, error) {
	regs := Registries{Scopes: map[string]*url.URL{}, tokens: map[string]Token{}}
	if npmrc != "" {
		// Opened without blocking, and only a regular file read: a named
		// pipe would hold the command until something wrote to it.
		f, err := localfile.Open(npmrc)
		if err != nil {
			return Registries{}, fmt.Errorf("UPCHECK_NPMRC: %w", err)
		}
		defer f.Close()
		if regs, err = ParseNpmrc(f, npmrc, getenv); err != nil {
			return Registries{}, err
		}
	}
	if registry != "" {
		u, err := ParseRegistryURL(registry)
		if err != nil {
			return Registries{}, fmt.Errorf("UPCHECK_NPM_REGISTRY: %w", err)
		}
		regs.Default = u
	}
	return regs, nil
}
