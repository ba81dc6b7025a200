package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// deliveryWorker is River's worker for deliveryArgs: one send of one event.
type deliveryWorker struct {
	river.WorkerDefaults[deliveryArgs]
	s *Service
}

// Work sends the event once and records how it went. A returned error makes
// River try again after the backoff; JobCancel stops for good.
func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	s := w.s
	d, err := s.store.Delivery(ctx, job.Args.EventID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return river.JobCancel(fmt.Errorf("event %s was deleted with its channel", job.Args.EventID))
	case err != nil:
		return err // the database: try again later
	case d.State == string(readmodel.DeliveryDelivered):
		return nil // a retry by hand raced a send that succeeded
	case !d.ChannelLive:
		held, err := s.store.EventHold(ctx, d.ID)
		if err != nil {
			return err
		}
		if held {
			return river.JobCancel(errors.New("the channel is disabled: the event is held until it is enabled"))
		}
		// The channel was enabled meanwhile (or the event is no longer
		// pending): read it again and go on as it says now.
		if d, err = s.store.Delivery(ctx, job.Args.EventID); errors.Is(err, store.ErrNotFound) {
			return river.JobCancel(fmt.Errorf("event %s was deleted with its channel", job.Args.EventID))
		} else if err != nil {
			return err
		}
		if d.State != string(readmodel.DeliveryPending) {
			return nil
		}
		if !d.ChannelLive {
			return errors.New("the channel is disabled and the event could not be held: trying again")
		}
	}

	status, err := s.send(ctx, d)
	switch {
	case err == nil && status >= 200 && status < 300:
		s.observer.Delivered(d.Channel.Kind, "delivered")
		return s.record(ctx, d, string(readmodel.DeliveryDelivered), "", 0)
	case err == nil && status == http.StatusGone:
		reason := "the receiver answered 410 Gone: it no longer accepts these notifications"
		if derr := s.store.ChannelDisable(ctx, d.Channel.ID, reason); derr != nil {
			return derr
		}
		s.observer.Delivered(d.Channel.Kind, "gone")
		return cancel(s.record(ctx, d, string(readmodel.DeliveryFailed), reason, 0), reason)
	}
	msg := failureText(status, err)
	state, result := string(readmodel.DeliveryPending), "retry"
	if job.Attempt >= job.MaxAttempts {
		state, result = string(readmodel.DeliveryFailed), "failed"
	}
	s.observer.Delivered(d.Channel.Kind, result)
	if rerr := s.record(ctx, d, state, msg, retryPolicy{base: s.timings.Backoff}.delay(job.Attempt)); rerr != nil {
		return rerr
	}
	s.logger.WarnContext(ctx, "notification not delivered", "event", d.ID, "channel", d.Channel.ID,
		"attempt", job.Attempt, "error", msg, "detail", err)
	return errors.New(msg)
}

// record stores how a send ended; an error means it could not be stored
// (River then tries the job again).
func (s *Service) record(ctx context.Context, d store.Delivery, state, message string, retryIn time.Duration) error {
	if err := s.store.EventRecordAttempt(ctx, d.ID, state, message, retryIn); err != nil {
		return fmt.Errorf("record delivery of %s: %w", d.ID, err)
	}
	return nil
}

// cancel stops a job for good with why, unless recording failed: then
// River tries again, and the next attempt records it.
func cancel(recordErr error, why string) error {
	if recordErr != nil {
		return recordErr
	}
	return river.JobCancel(errors.New(why))
}

// failureText says in plain words why a send failed; the log line keeps
// the technical text.
func failureText(status int, err error) string {
	if err != nil {
		return "not sent: " + postFailureWhy(err)
	}
	return fmt.Sprintf("the receiver answered %d %s", status, http.StatusText(status))
}

// postFailureWhy words a webhook post that got no answer, from the typed
// error the fetcher returned.
func postFailureWhy(err error) string {
	var (
		private *fetch.PrivateAddressError
		dns     *net.DNSError
		timeout *fetch.TimeoutError
		opErr   *net.OpError
	)
	switch {
	case errors.As(err, &private):
		addr := "the receiver’s address"
		if private.Addr.IsValid() {
			addr += " " + private.Addr.String()
		}
		return addr + " is private (loopback or an internal network); set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it"
	case errors.As(err, &timeout):
		return "the receiver did not answer within " + timeout.After.String()
	case errors.As(err, &dns):
		return "the receiver’s host name could not be found"
	case errors.Is(err, fetch.ErrUnsupportedScheme):
		return "the receiver’s address is not an http or https URL"
	case errors.As(err, &opErr):
		return "could not connect to the receiver"
	}
	return "the receiver could not be reached"
}

// send makes one attempt to the channel's receiver.
func (s *Service) send(ctx context.Context, d store.Delivery) (int, error) {
	header := http.Header{"Content-Type": {"application/json"}}
	var body []byte
	var err error
	switch readmodel.ChannelKind(d.Channel.Kind) {
	case readmodel.ChannelWebhook:
		body, err = json.Marshal(struct {
			Type      string          `json:"type"`
			Timestamp time.Time       `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
			AdminURL  string          `json:"admin_url,omitempty"`
		}{d.Type, d.CreatedAt.UTC(), d.Payload, eventURL(s.publicURL, d.Payload)})
		if err != nil {
			return 0, err
		}
		// Standard Webhooks: the id is the event's, the same on every
		// attempt; the timestamp and signature are this attempt's.
		now := time.Now().Unix()
		sig, err := Sign(d.Secret, d.ID.String(), now, body)
		if err != nil {
			return 0, err
		}
		header.Set("webhook-id", d.ID.String())
		header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
		header.Set("webhook-signature", sig)
	case readmodel.ChannelSlack:
		link := chatEscape(eventURL(s.publicURL, d.Payload))
		if body, err = json.Marshal(map[string]string{"text": slackText(d, link)}); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("channels of kind %q cannot be sent to", d.Channel.Kind)
	}
	return s.fetcher.Post(ctx, d.Channel.Target, header, body, sendTimeout)
}

// payloadCode is the component an event is about, "" for none.
func payloadCode(payload []byte) string {
	var p struct {
		Component struct{ Code string } `json:"component"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Component.Code
}

// eventURL is the AdminCP page an event links to under publicURL ("" for
// none): a component's page (adminURL), a registered site's overview for
// an event naming one site (its components have no page of their own
// there), the Fleet page for a digest naming several.
func eventURL(publicURL string, payload []byte) string {
	var p struct {
		Site  string   `json:"site"`
		Sites []string `json:"sites"`
	}
	_ = json.Unmarshal(payload, &p) // a payload of another shape links as before
	switch {
	case publicURL == "":
		return ""
	case p.Site != "":
		return publicURL + "/sites/" + url.PathEscape(p.Site)
	case len(p.Sites) > 0:
		return publicURL + "/admin/fleet"
	}
	return adminURL(publicURL, payloadCode(payload))
}
