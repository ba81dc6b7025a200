package views

// ErrorProps is an error page (403, 404, 500, 503). It shows no user data,
// so it can be rendered when the session or the database is unavailable.
type ErrorProps struct {
	Status int
	// Title and Message default to plain words for Status when empty.
	Title   string
	Message string
	// Asset as in LayoutProps; nil uses static.Path.
	Asset func(name string) string
}

// errorText is an error page's default title and message.
func errorText(status int) (title, message string) {
	switch status {
	case 400:
		return "Bad request", "The request could not be understood. Go back and try again."
	case 401:
		return "Please log in", "Your session has ended. Log in again to continue."
	case 403:
		return "Access denied", "Your account is not allowed to do this. Ask an administrator if you need access."
	case 404:
		return "Page not found", "There is nothing at this address. It may have been removed, or the link may be wrong."
	case 503:
		return "Temporarily unavailable", "upcheck cannot answer right now, usually because its database cannot be reached. Try again in a minute."
	default:
		return "Something went wrong", "The server could not complete the request. Try again in a minute; if it keeps happening, the server log says why."
	}
}
