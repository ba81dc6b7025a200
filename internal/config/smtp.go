package config

import (
	"errors"
	"fmt"
	"net/mail"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Email notifications: UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM.

// SMTP is the mail server that email notifications go through.
type SMTP struct {
	// Security is "starttls" (smtp://, STARTTLS required), "tls"
	// (smtps://, TLS from the first byte) or "none" (smtp+plain://, no
	// TLS: a loopback host only).
	Security string
	Host     string
	Port     int
	// Username and Password, when the URL carries them, log in (SMTP AUTH).
	Username string
	Password string
	// From is the sender, an RFC 5322 address such as
	// "upcheck <upcheck@example.org>".
	From string
}

// ParseSMTP reads UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM: both empty is no
// email (the zero SMTP); one without the other, a URL that is not
// smtp://user:pass@host[:587], smtps://host[:465] or
// smtp+plain://localhost[:25], plain SMTP to a host that is not a loopback
// one, or a sender that is not an address, is an error naming the variable.
func ParseSMTP(rawURL, from string) (SMTP, error) {
	rawURL, from = strings.TrimSpace(rawURL), strings.TrimSpace(from)
	switch {
	case rawURL == "" && from == "":
		return SMTP{}, nil
	case rawURL == "":
		return SMTP{}, errors.New("UPCHECK_SMTP_FROM is set but UPCHECK_SMTP_URL is not: email needs both")
	case from == "":
		return SMTP{}, errors.New("UPCHECK_SMTP_URL is set but UPCHECK_SMTP_FROM is not: email needs both")
	}
	const want = "want smtp://user:password@host:587 (STARTTLS), smtps://user:password@host:465 (TLS) or smtp+plain://localhost:25 (no TLS, this machine only)"
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's error repeats the URL, password included.
		return SMTP{}, fmt.Errorf("UPCHECK_SMTP_URL is not a URL: %s", want)
	}
	s := SMTP{Host: u.Hostname(), From: from}
	defaultPort := map[string]int{"smtp": 587, "smtps": 465, "smtp+plain": 25}[u.Scheme]
	s.Security = map[string]string{"smtp": "starttls", "smtps": "tls", "smtp+plain": "none"}[u.Scheme]
	switch {
	case s.Security == "":
		return SMTP{}, fmt.Errorf("UPCHECK_SMTP_URL: scheme %q: %s", u.Scheme, want)
	case s.Host == "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return SMTP{}, fmt.Errorf("UPCHECK_SMTP_URL: a scheme, a host and a port only: %s", want)
	}
	s.Port = defaultPort
	if p := u.Port(); p != "" {
		if s.Port, err = strconv.Atoi(p); err != nil || s.Port < 1 || s.Port > 65535 {
			return SMTP{}, fmt.Errorf("UPCHECK_SMTP_URL: port %q is not a port number", p)
		}
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	if err := s.Validate(); err != nil {
		return SMTP{}, err
	}
	return s, nil
}

// Validate refuses settings that cannot work, and plain SMTP off this
// machine. The zero SMTP (no email) is valid. ParseSMTP applies it; a
// notify.Service built without a Config applies it too.
func (s SMTP) Validate() error {
	if s.Host == "" {
		return nil
	}
	switch s.Security {
	case "starttls", "tls":
	case "none":
		if !isLoopbackHost(s.Host) {
			return fmt.Errorf("UPCHECK_SMTP_URL: smtp+plain:// sends without TLS and is allowed only to this machine "+
				"(localhost, 127.0.0.1, ::1), not to %q: use smtp:// (STARTTLS) or smtps://", s.Host)
		}
	default:
		return fmt.Errorf("UPCHECK_SMTP_URL: security %q (want starttls, tls or none)", s.Security)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Errorf("UPCHECK_SMTP_URL: port %d is not a port number", s.Port)
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		return fmt.Errorf("UPCHECK_SMTP_FROM: %q is not an email address (%v)", s.From, err)
	}
	return nil
}

// isLoopbackHost reports whether host names this machine: localhost or a
// loopback address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
