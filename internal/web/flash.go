package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// A flash carries what a form post wants its next page to say once: a
// notice, a form error, or a secret that is shown at creation and never
// again. Every post answers with a redirect (303) to a page, and that page
// takes the flash: reloading it, or going back to it, shows nothing more.
//
// The flash travels in a cookie of its own, sealed (AES-GCM) with a key
// derived from the session's token, which the server never stores: only
// the browser that made the post can have it opened, no instance needs a
// shared key, and a secret in it is never written to the database or a
// log. It is bound to the page it is for and lives flashTTL.
const (
	flashCookie = "upcheck_flash"
	flashTTL    = time.Minute
)

// flash is what one post leaves for its page.
type flash struct {
	Page    string            `json:"page"`
	Expires time.Time         `json:"exp"`
	Notice  string            `json:"notice,omitempty"`
	Error   string            `json:"error,omitempty"`
	Values  map[string]string `json:"values,omitempty"` // secrets and the like, by name
}

// redirectWithFlash leaves f for the next GET of page by this session and answers
// the post with a redirect there. A request without a session (an API
// token) cannot carry a flash: its answer is the API's JSON, never this.
func (s *Server) redirectWithFlash(c echo.Context, page string, f flash) error {
	token := s.auth.SessionToken(c.Request())
	if token == "" {
		return echo.NewHTTPError(http.StatusForbidden, "This form needs a signed-in browser session.")
	}
	f.Page = page
	f.Expires = time.Now().Add(flashTTL)
	sealed, err := sealFlash(token, f)
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: sealed, Path: page, MaxAge: int(flashTTL / time.Second),
		HttpOnly: true, Secure: c.IsTLS() || s.auth.SecureCookies(), SameSite: http.SameSiteStrictMode})
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, page)
}

// takeFlash returns the flash left for page by this session, and drops it
// from the browser. A flash for another page, another session, or past its
// time is no flash. A page that shows a flash is not cached
// (Cache-Control: no-store), so Back shows nothing either.
func (s *Server) takeFlash(c echo.Context, page string) (flash, bool) {
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return flash{}, false
	}
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: page, MaxAge: -1,
		HttpOnly: true, Secure: c.IsTLS() || s.auth.SecureCookies(), SameSite: http.SameSiteStrictMode})
	c.Response().Header().Set("Cache-Control", "no-store")
	token := s.auth.SessionToken(c.Request())
	if token == "" {
		return flash{}, false
	}
	f, ok := openFlash(token, ck.Value)
	if !ok || f.Page != page || time.Now().After(f.Expires) {
		return flash{}, false
	}
	return f, true
}

// flashAEAD is the cipher of one session's flashes.
func flashAEAD(sessionToken string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(sessionToken), nil, "upcheck flash v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func sealFlash(sessionToken string, f flash) (string, error) {
	aead, err := flashAEAD(sessionToken)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

func openFlash(sessionToken, sealed string) (flash, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return flash{}, false
	}
	aead, err := flashAEAD(sessionToken)
	if err != nil || len(raw) < aead.NonceSize() {
		return flash{}, false
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return flash{}, false
	}
	var f flash
	if json.Unmarshal(plain, &f) != nil {
		return flash{}, false
	}
	return f, true
}
