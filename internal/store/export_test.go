package store

// SQLStateLeaseNotHeld lets the external tests name upcheck's own code.
const SQLStateLeaseNotHeld = sqlstateLeaseNotHeld

// SQLStateEventsToQueue lets the external tests name upcheck_nothing_to_queue's code.
const SQLStateEventsToQueue = sqlstateEventsToQueue
