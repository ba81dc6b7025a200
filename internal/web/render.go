package web

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// pages are the buffers pages are rendered into: a page is written to the
// connection whole, with its length, in one write rather than a chunk at
// every 4 KiB the template fills (a system call each).
var pages = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledPage is the largest buffer kept for the next page: a rare
// large page's buffer is left to the collector.
const maxPooledPage = 1 << 20

// render writes a templ component as the response. The page is rendered
// whole before anything is sent, so that a template's error is a 500, not
// a page cut short.
func render(c echo.Context, status int, component templ.Component) error {
	buf := pages.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledPage {
			pages.Put(buf)
		}
	}()
	if err := component.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Set(echo.HeaderContentLength, strconv.Itoa(buf.Len()))
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(buf.Bytes())
	return err
}

// renderOK writes a page with status 200.
func renderOK(c echo.Context, component templ.Component) error {
	return render(c, http.StatusOK, component)
}
