package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/upcheck/upcheck/internal/readmodel"
)

var errDown = errors.New("database down")

// count reads upcheck_http_requests_total{route, status}.
func count(t *testing.T, m *Metrics, route string, status int) int {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	prefix := fmt.Sprintf("upcheck_http_requests_total{route=%q,status=%q} ", route, strconv.Itoa(status))
	for line := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// HTTP counts what the client was sent, which only the error handler
// knows: here it maps errDown to 503 wherever it is wrapped, as
// internal/web maps store.ErrUnavailable. Panics reach it through Recover.
func TestHTTPCountsTheStatusSent(t *testing.T) {
	t.Parallel()
	m := New(func(context.Context) (readmodel.Summary, error) { return readmodel.Summary{}, errDown })
	e := echo.New()
	e.Logger.SetOutput(io.Discard) // Recover logs the panic's stack
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		var he *echo.HTTPError
		switch {
		case errors.Is(err, errDown):
			err = c.NoContent(http.StatusServiceUnavailable)
		case errors.As(err, &he):
			err = c.NoContent(he.Code)
		default:
			err = c.NoContent(http.StatusInternalServerError)
		}
		if err != nil {
			t.Errorf("write error response: %v", err)
		}
	}
	e.Use(m.HTTP(), middleware.Recover())
	e.GET("/ok", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET("/down", func(echo.Context) error { return fmt.Errorf("read: %w", errDown) })
	e.GET("/teapot", func(echo.Context) error { return fmt.Errorf("wrapped: %w", echo.NewHTTPError(http.StatusTeapot)) })
	e.GET("/unknown", func(echo.Context) error { return errors.New("nobody maps this") })
	e.GET("/panic", func(echo.Context) error { panic("handler bug") })
	e.GET("/late", func(c echo.Context) error {
		if err := c.NoContent(http.StatusAccepted); err != nil {
			return err
		}
		return errDown // after the answer went out: the client saw 202
	})

	for _, c := range []struct {
		path, route string
		status      int
	}{
		{"/ok", "/ok", 204}, {"/down", "/down", 503}, {"/teapot", "/teapot", 418}, {"/unknown", "/unknown", 500},
		{"/panic", "/panic", 500}, {"/late", "/late", 202}, {"/nowhere", "unmatched", 404},
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != c.status {
			t.Fatalf("GET %s: status %d, want %d", c.path, rec.Code, c.status)
		}
		if got := count(t, m, c.route, c.status); got != 1 {
			t.Errorf("GET %s: requests{route=%q,status=\"%d\"} = %d, want 1", c.path, c.route, c.status, got)
		}
	}
}
