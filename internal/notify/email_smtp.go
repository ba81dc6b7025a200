package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/upcheck/upcheck/internal/config"
	gomail "github.com/wneessen/go-mail"
)

// WithSMTP lets the Service send email, through the mail server m
// (UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM, parsed by config.ParseSMTP).
func WithSMTP(m config.SMTP) Option { return func(s *Service) { s.smtp = m } }

// ErrNoSMTP means this process has no mail server to send email through.
var ErrNoSMTP = errors.New("email needs a mail server: set UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM")

// configured reports whether m names a mail server.
func configured(m config.SMTP) bool { return m.Host != "" }

// mailStep bounds each stretch of one SMTP exchange (go-mail sets it as the
// connection's deadline when it connects and again before it sends): three
// of them fit inside a job's timeout.
func mailStep(t Timings) time.Duration { return min(10*time.Second, jobTimeout(t)/3) }

// client is a go-mail client for one send.
func smtpClient(m config.SMTP, step time.Duration) (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(m.Port), gomail.WithTimeout(step)}
	switch m.Security {
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if m.Username != "" {
		auth := gomail.SMTPAuthAutoDiscover
		if m.Security == "none" {
			// Loopback only (check): the password does not leave the machine.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(m.Username), gomail.WithPassword(m.Password))
	}
	return gomail.NewClient(m.Host, opts...)
}

// sendMail makes one attempt to hand msg to the mail server.
func (s *Service) sendMail(ctx context.Context, msg *gomail.Msg) error {
	if !configured(s.smtp) {
		return ErrNoSMTP
	}
	c, err := smtpClient(s.smtp, mailStep(s.timings))
	if err != nil {
		return err
	}
	err = c.DialAndSendWithContext(ctx, msg)
	if err != nil && msg.IsDelivered() {
		// The server took the message and only the goodbye failed: sending
		// it again would deliver it twice.
		s.logger.WarnContext(ctx, "mail server accepted the message, then the connection failed", "error", err)
		return nil
	}
	return err
}

// mailFailureText says in plain words why a message was not sent.
func mailFailureText(err error, m config.SMTP, step time.Duration) string {
	server := net.JoinHostPort(m.Host, strconv.Itoa(m.Port))
	var se *gomail.SendError
	var te *textproto.Error
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	text := err.Error()
	var why string
	switch {
	case errors.Is(err, ErrNoSMTP):
		why = ErrNoSMTP.Error()
	case errors.As(err, &se) && se.ErrorCode() != 0:
		why = fmt.Sprintf("the mail server refused %s: %s", refused(se), serverReply(se, text))
	case errors.As(err, &te) && (te.Code == 530 || te.Code == 534 || te.Code == 535):
		why = fmt.Sprintf("the mail server refused the login: %d %s", te.Code, te.Msg)
	case errors.As(err, &te):
		why = fmt.Sprintf("the mail server answered %d %s", te.Code, te.Msg)
	case errors.As(err, &dns):
		why = fmt.Sprintf("the mail server's name %q does not resolve", m.Host)
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "nothing accepts connections at " + server
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || strings.Contains(text, "i/o timeout"):
		why = fmt.Sprintf("the mail server at %s did not answer within %s", server, step)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(text, "EOF") || strings.Contains(text, "connection reset") || strings.Contains(text, "broken pipe"):
		// The last three by text: go-mail's SendError does not unwrap.
		why = "the mail server closed the connection before it accepted the message"
	case strings.Contains(text, "not support STARTTLS"):
		why = "the mail server does not offer STARTTLS, which smtp:// requires: use smtps:// if it speaks TLS, " +
			"or smtp+plain:// for a relay on this machine"
	case errors.As(err, &cert) || errors.As(err, &unknownAuthority):
		why = "the mail server's TLS certificate is not trusted: " + text
	default:
		why = text
	}
	return "not sent: " + why
}

// refused says what the server refused, and whether for now (a 4xx reply).
func refused(se *gomail.SendError) string {
	what := map[gomail.SendErrReason]string{gomail.ErrSMTPMailFrom: "the sender", gomail.ErrSMTPRcptTo: "a recipient"}[se.Reason]
	if what == "" {
		what = "the message"
	}
	if se.IsTemp() {
		what += " for now"
	}
	return what
}

// serverReply finds the server's reply ("451 4.3.0 Try again later") in a
// SendError's text (it does not unwrap), where net/textproto quoted it.
func serverReply(se *gomail.SendError, text string) string {
	code := strconv.Itoa(se.ErrorCode())
	i := strings.Index(text, code+" ")
	if i < 0 {
		return text
	}
	rest := text[i+len(code)+1:]
	if q, err := strconv.QuotedPrefix(rest); err == nil {
		if msg, err := strconv.Unquote(q); err == nil {
			return code + " " + msg
		}
	}
	reply, _, _ := strings.Cut(text[i:], ", affected ")
	return reply
}
