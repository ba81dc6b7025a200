package web

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// decodeJSONBody reads a request's JSON object into v: 415 for another
// media type, 400 for a body that is not one JSON object, 413 past the
// body limit, 422 for a member that is unknown or of the wrong type, in
// words.
func decodeJSONBody(c echo.Context, v any) error {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "Send the body as JSON, with Content-Type: application/json.")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one value")
	}
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("more than one value")
		}
	}
	// A body past its route's limit is answered by bodyLimit, which knows
	// the read hit the limit, whatever this returns.
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "The member “"+typeErr.Field+"” must be a "+jsonTypeName(typeErr.Type.Kind().String())+".").WithInternal(err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "The body has a member this request does not take: “"+clip(name)+"”.").WithInternal(err)
	}
	return echo.NewHTTPError(http.StatusBadRequest, "The body is not one JSON object.").WithInternal(err)
}

// jsonTypeName is a Go kind in JSON's words.
func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean (true or false)"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "list"
	}
	return "number"
}
