package views

// LoginProps is the login page. It has no layout: nobody is signed in.
type LoginProps struct {
	// Error is shown above the form, e.g. "Wrong email or password."
	Error string
	// Email refills the email field after a failed attempt.
	Email string
	// Next is the local path to return to after logging in; posted back as
	// the hidden field "next". The handler must check it is a local path.
	Next string
	// CSRFToken is posted back as csrf_token; it may be empty.
	CSRFToken string
	// Asset as in LayoutProps; nil uses static.Path.
	Asset func(name string) string
}
