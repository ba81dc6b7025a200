package store

// SQLStateLeaseNotHeld lets the external tests name upcheck's own code.
const SQLStateLeaseNotHeld = sqlstateLeaseNotHeld
