// Package feed reads what advisory feeds bring, with no database: an OSV
// ecosystem archive (a zip of OSV JSON records) and the modified_id.csv
// index beside it, an OSV-compatible API, the KEV catalogue's JSON and the
// daily EPSS CSV. The feed sync calls it; storing is not its business.
//
// # Everything is capped
//
// An archive is spooled to a temporary file, never held in memory, under
// [Limits.MaxArchive]. [OpenArchive] refuses a zip whose entry count or
// declared uncompressed total is over the limits before any entry is read,
// so a zip bomb costs nothing. [Archive.Scan] then reads every record once,
// hashing it; archive/zip checks each entry's CRC and refuses an entry that
// yields more bytes than it declared, so a malformed archive ends the scan
// with [ErrArchive] before the caller has stored anything. A record over
// [Limits.MaxRecord] is never read: it is reported TooLarge and the caller
// lists it as skipped. The KEV and EPSS readers take a byte cap (EPSS's is
// on the decompressed bytes) and list the entries or rows they skip,
// naming them, instead of failing the whole file.
//
// # Errors
//
// [ErrArchive] is a broken or oversized archive; [ErrSchema] a file that is
// not the format its kind promises. Failures of the network are the fetch
// package's errors, wrapped: test them with errors.Is.
package feed
