// Package updatedoc reads the update documents publishers serve (format 1,
// JSON) and checks their signatures: an adapter at the edge, which
// produces the domain's types (release.Package, by [Document.Package]) for
// internal/release to evaluate ([Evaluate] is release.Evaluate against a
// document). It does no I/O: bytes come in, values and errors go out, so
// the same code serves the fetching check, the re-evaluation after an
// installed version changed, and the publisher CLI. The format itself is
// described for publishers in docs/update-document.md.
//
// # Strict where it decides, lenient where it may grow
//
// [Parse] accepts unknown fields anywhere, so that publishers can add to
// format 1 without breaking readers that predate the addition. Everything an
// evaluation relies on is checked, and the document is refused as a whole at
// the first problem: a half-understood document could turn "vulnerable"
// into "up to date". In particular versions are strict semantic versions
// (no "v" prefix, no "1.2"), ranges and times must parse, URLs must be
// absolute http(s) without user information (they become links in the
// admin UI, and https://acme.example@evil.example/ would read as one host
// and lead to another), severities come from a fixed list, and no object
// may have two members whose names are equal ignoring case, nor a member
// whose name differs from one of the format's only by case ("Version"):
// encoding/json matches names ignoring case and keeps the last of two, so
// it would read a value that another reader of the same signed bytes does
// not. Nothing may follow the JSON value. Every such error wraps
// [ErrInvalid] and names the place, as in
//
//	update document: releases[2].version "abc" of package "blog" is not a semantic version
//
// [Lint] lists every problem of a document, each with its JSON path and its
// line and column, for the publisher's tools; Parse is Lint stopped at the
// first problem, so the two cannot disagree.
//
// # Trust
//
// A document is trusted only as far as three checks allow: [Verify] (the
// detached Ed25519 signature of the exact bytes, when a key is pinned),
// [CheckSequence] (the sequence never goes back, which stops a replay of an
// older, valid, signed document), and its expiry (Document.Expires): past
// it the document is shown as stale, not silently trusted, which stops a
// frozen feed from hiding new advisories forever. The expiry is judged by
// the database's read model when results are read, on the database clock.
package updatedoc
