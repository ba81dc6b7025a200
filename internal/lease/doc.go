/*
Package lease makes update checks exclusive across every upcheck instance that
shares one database, and makes sure an instance that lost the right to write
can never write.

# The row

The lease is the row name = 'check' of core_update_lock. Its owner is a random
uuid chosen at acquisition; its epoch grows by one at every acquisition and is
stored with every row a holder writes, so any result can be traced to the run
that wrote it. expires_at is an instant on the database clock.

# The clock

Every decision about time is made by PostgreSQL with clock_timestamp(): the
wall-clock time at the moment the statement runs. now() would be wrong: it is
the start of the transaction, so a statement that waited seconds for a lock
would still judge expiry as of before the wait, and a fenced write that
waited past its expiry would pass. The server's own clock is never consulted
for a decision, so instances whose clocks disagree by hours still agree on
who holds the lease.

# Lock order

Every lease transaction — acquire, renew, release, and the fenced write —
first sets short lock, statement and idle-in-transaction timeouts, then takes
pg_advisory_xact_lock on the lease's key, then locks the row with
SELECT … FOR UPDATE. Always this order, so two lease transactions can only
queue behind each other, never deadlock. The preamble runs in the database
functions upcheck_lease_begin and upcheck_lease_fence: one round trip
instead of three (none of its own in a fenced
batch), and the order is that of the function's
statements, not left to a planner. The advisory lock is the real
serialiser; the row lock also stops anything that updates the row outside
these functions (an older release during a rolling deploy, an operator with
psql) from slipping between check and write.

# Acquire

Inside the locks, the row is judged: a scheduled trigger is skipped when a
check completed since the current period began; a live owner means busy; a
manual trigger inside the cooldown gets the seconds left. Otherwise the UPDATE
takes the lease, and that UPDATE repeats the "free" and cooldown conditions.
The repetition matters on its own: under READ COMMITTED a second UPDATE that
waited on the row re-evaluates its WHERE against the winner's new row, finds
it no longer free, and changes nothing. A plain SELECT-then-UPDATE lets both
takers win (the test suite proves this with a control).

# Fenced writes

WithLease opens one transaction, takes both locks, checks that the owner
still matches and expires_at > clock_timestamp(), runs the caller's writes
and commits while still holding the locks. A takeover needs the same locks,
so it waits for that commit; the old owner's next fenced write then sees a
different owner and is refused with ErrLeaseLost, having written nothing.

SendFenced gives the same guarantee in one round trip. The fence function
(upcheck_lease_fence) raises SQLSTATE UL001 when owner does not hold a live
lease, instead of answering; it is sent as the first statement of one
pipelined batch (store.Batch), which PostgreSQL runs as one implicit
transaction up to the batch's Sync. A failing statement aborts that
transaction, so when the fence raises no write behind it runs and nothing
commits; when it passes, its locks are held until the batch commits, and a
takeover waits for that, as for WithLease. The statement timeout it sets
applies to each later statement of the batch. A check writes each source
this way; TestFencedBatchRaceNoWriteFromANonHolder races writers under
current and stale leases against leases changing hands and checks the
epoch of every committed row against the lease's at its commit.

A holder paused inside an open fenced transaction (a long GC pause, a frozen
VM, SIGSTOP) would hold the locks for the length of its pause. The
transaction's idle_in_transaction_session_timeout ends such a session well
before the lease would expire, which releases the locks; its writes roll back.

# Release, and settling after an outage

Release frees the lease only while the owner named holds it: an owner whose
lease ran out and was taken can never free its successor's. A check ends
with Settle, which releases and records the run's end in one transaction,
so the history never shows a run as abandoned between the two. A check
cut off by an outage must still do both, but its context is already
cancelled and the database does not answer: Settle runs its attempts under
context.WithoutCancel with deadlines of their own and tries again, with a
growing pause, while the database does not answer or a lock wait times out,
until the lease could have expired (Expiry: the send of the last confirmed
renewal plus the lease; after it a successor may hold the lease and the
run reads as abandoned anyway). Its owner is the check's call, which waits
for it; once the parent context is done (shutdown) it tries for at most
SettleGrace more, so a shutdown is never held for long.

# Heartbeat and the trust window

While a check runs, the heartbeat renews the lease about once a minute, the
next renewal scheduled only after the previous one answered. The check's
context is cancelled with cause ErrLeaseLost when a renewal is refused, when
a renewal fails (the database is unreachable), or when no renewal has
confirmed the lease before it could have expired. That last rule uses the
process's monotonic clock, measured from when the last successful renewal was
sent, not from when it answered: the database extended the lease at some
moment after the send, so the send is the only safe lower bound. A margin is
taken off the lease so the process stops trusting itself before the database
would let anyone else in. The local trust window is an optimisation that
stops useless work early; the fenced write is the guard that makes it safe.
*/
package lease
