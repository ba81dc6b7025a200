package notify

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	gomail "github.com/wneessen/go-mail"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// emailArgs is one River job: send one email message (all the events it
// covers).
type emailArgs struct {
	MessageID uuid.UUID `json:"message_id"`
}

// Kind names the job in River's tables.
func (emailArgs) Kind() string { return "upcheck.email" }

// QueueRunEnd gathers, in tx (a check's last fenced transaction, epoch its
// lease's), every email event that is in no message yet, the check's own
// and those queued since the last gathering (a manifest sync's), into one
// message per channel, and inserts one email job per message in the same
// transaction.
func (s *Service) QueueRunEnd(ctx context.Context, tx *store.Tx, epoch int64) error {
	n, err := s.gather(ctx, tx, 0, true)
	if n > 0 {
		s.logger.InfoContext(ctx, "email messages queued", "messages", n, "epoch", epoch)
	}
	return err
}

// gather gathers the loose email events of one channel (every channel when
// channelID is 0) into messages and inserts their jobs. Outside a check's
// end (includeRunning false) the events of a check still running are left
// to it, so that they go out together.
func (s *Service) gather(ctx context.Context, tx *store.Tx, channelID int64, includeRunning bool) (int, error) {
	ids, err := tx.MessageGather(ctx, channelID, includeRunning)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return len(ids), s.insertEmail(ctx, tx, ids)
}

func (s *Service) insertEmail(ctx context.Context, tx *store.Tx, ids []uuid.UUID) error {
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: emailArgs{MessageID: id}}
	}
	_, err := s.river.InsertManyTx(ctx, tx.Pgx(), params)
	return err
}

// ParseRecipients reads an email channel's --to: addresses separated by
// commas ("ops@example.org, Jo <jo@example.org>"), as net/mail reads them,
// and returns them as the channel stores them.
func ParseRecipients(to string) (string, error) {
	addrs, err := mail.ParseAddressList(to)
	if err != nil || len(addrs) == 0 {
		return "", fmt.Errorf("%w: %q is not a list of email addresses (ops@example.org, Jo <jo@example.org>)", ErrInvalidChannel, to)
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.Address
		if a.Name != "" {
			out[i] = a.String()
		}
	}
	return strings.Join(out, ", "), nil
}

// checkEmail refuses an email channel when this process has no mail server
// or an address does not parse, and names it after its first address.
func (s *Service) checkEmail(c *store.NewChannel) error {
	if !configured(s.smtp) {
		return fmt.Errorf("%w: %w", ErrInvalidChannel, ErrNoSMTP)
	}
	to, err := ParseRecipients(c.Target)
	if err != nil {
		return err
	}
	if len(to) > 2000 || len(c.Name) > 200 {
		return fmt.Errorf("%w: the addresses or the name are too long", ErrInvalidChannel)
	}
	c.Target = to
	if c.Name == "" {
		first, _, _ := strings.Cut(to, ", ")
		c.Name = first
	}
	return nil
}

// emailWorker is River's worker for emailArgs: one send of one message.
type emailWorker struct {
	river.WorkerDefaults[emailArgs]
	s *Service
}

// Work sends the message once and records how it went on the message and
// its events. A returned error makes River try again after the backoff;
// JobCancel stops for good.
func (w *emailWorker) Work(ctx context.Context, job *river.Job[emailArgs]) error {
	s := w.s
	m, err := s.store.Message(ctx, job.Args.MessageID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return river.JobCancel(fmt.Errorf("message %s was deleted with its channel", job.Args.MessageID))
	case err != nil:
		return err // the database: try again later
	case m.State == string(readmodel.DeliveryDelivered):
		return nil // a retry by hand raced a send that succeeded
	case !m.Channel.Enabled:
		held, err := s.store.MessageHold(ctx, m.ID)
		if err != nil {
			return err
		}
		if held {
			return river.JobCancel(errors.New("the channel is disabled: the message is held until it is enabled"))
		}
		// Enabled meanwhile, or no longer pending: as the message says now.
		if m, err = s.store.Message(ctx, job.Args.MessageID); errors.Is(err, store.ErrNotFound) {
			return river.JobCancel(fmt.Errorf("message %s was deleted with its channel", job.Args.MessageID))
		} else if err != nil {
			return err
		}
		if m.State != string(readmodel.DeliveryPending) {
			return nil
		}
		if !m.Channel.Enabled {
			return errors.New("the channel is disabled and the message could not be held: trying again")
		}
	}
	err = s.sendEmail(ctx, m)
	if err == nil {
		return s.recordMessage(ctx, m, string(readmodel.DeliveryDelivered), "")
	}
	msg := mailFailureText(err, s.smtp, mailStep(s.timings))
	state := string(readmodel.DeliveryPending)
	if job.Attempt >= job.MaxAttempts {
		state = string(readmodel.DeliveryFailed)
	}
	if err := s.store.MessageRecordAttempt(ctx, m.ID, state, msg); err != nil {
		return fmt.Errorf("record sending of message %s: %w", m.ID, err)
	}
	s.logger.WarnContext(ctx, "email not delivered", "message", m.ID, "channel", m.Channel.ID,
		"attempt", job.Attempt, "error", msg, "cause", err)
	return errors.New(msg)
}

// sendEmail words the message and makes one attempt to send it.
func (s *Service) sendEmail(ctx context.Context, m store.Message) error {
	content, err := composeMail(m, s.publicURL)
	if err != nil {
		return err
	}
	to, err := mail.ParseAddressList(m.Channel.Target)
	if err != nil {
		return fmt.Errorf("the channel's addresses: %w", err)
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.smtp.From); err != nil {
		return fmt.Errorf("the sender: %w", err)
	}
	msg.ToMailAddress(to...)
	msg.Subject(content.Subject)
	msg.SetMessageIDWithValue(messageID(m))
	msg.SetDateWithValue(time.Now())
	msg.SetUserAgent("upcheck")
	// RFC 3834: vacation responders and the like must not answer.
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, content.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, content.HTML)
	return s.sendMail(ctx, msg)
}

// recordMessage stores how a send ended; its error is the job's.
func (s *Service) recordMessage(ctx context.Context, m store.Message, state, message string) error {
	if err := s.store.MessageRecordAttempt(ctx, m.ID, state, message); err != nil {
		return fmt.Errorf("record sending of message %s: %w", m.ID, err)
	}
	if message != "" {
		return errors.New(message)
	}
	return nil
}
