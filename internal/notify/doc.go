// Package notify tells operators about new security problems without
// waiting for them to sign in: webhooks (Standard Webhooks, signed), Slack-
// style incoming webhooks, and email.
//
// # Queued once, with the results that cause them
//
// Events are planned by SQL from the read model (store.Tx.EventPlan), in
// the same fenced transaction that writes the results that cause them: a
// check that lost its lease queues nothing, and no crash can fall between
// the write and the queueing. An event's key is derived from its content
// (component and version, advisory and installed version), and
// notification_events has UNIQUE (channel_id, key), so planning again (after
// a crash, by the next check, by another instance) never queues an event a
// channel already has. A dismissed advisory queues nothing: the read model
// leaves it out. A channel created while problems are outstanding is
// planned for at once and receives them once each.
//
// A check's write is one pipelined batch (lease.SendFenced) that plans
// nothing in the common case: it asks, in that batch's transaction, whether
// any enabled channel lacks an event the written results may call for
// (store.Batch.EventPlanNothingNew: keys made from the stored results, a
// superset of the read model's facts, so never a false "nothing"). Only
// when one may be missing does the batch fail, having written nothing, and
// the source is written again in a fenced transaction that plans and
// queues as above. The question sees the channels that planning would have
// seen at that point of the transaction, so a channel created concurrently
// is treated exactly as before: what neither its creation nor this write
// saw is planned by the next write of those components.
//
// # Delivered at least once, never lost
//
// Each event has one River job (github.com/riverqueue/river), inserted with
// InsertManyTx in that same transaction. River's worker claims it under a
// lease (RescueStuckJobsAfter, 5 minutes): a process that dies mid-send
// leaves the job running until the lease ends, then another worker sends
// it again, with the same webhook-id. So a crash costs at most one extra
// send of the message in flight, and the receiver can deduplicate. A send
// is tried up to 8 times with a backoff of about 30 s, 2 min, 10 min, 1 h,
// 3 h, 6 h and 12 h; an event stays pending until recorded as delivered,
// or is marked failed after the last attempt and can be retried by hand.
// River deletes finished jobs after its retention; notification_events is
// the record that stays.
//
// # Email: one message per check run and channel
//
// An email channel's events are queued like the others but get no job of
// their own (insert skips them). A gathering (store.Tx.MessageGather) takes
// every pending email event that is in no message yet, makes one
// notification_messages row per channel, keyed by the channel and the set
// of its events' keys, points the events at it and inserts one
// "upcheck.email" job per message, all in the gathering's transaction. The
// check gathers in its last fenced transaction (QueueRunEnd, called by
// updatecheck at the clean-up), so a run's events leave as one message; a
// new channel and a test gather at once, in their own transaction; the
// hourly overdue job gathers what no check took (a manifest sync's events,
// those of a check that did not complete). Outside a check's end, the events
// of the check that holds the lease are left to it. Gatherings take turns
// on an advisory lock, taken before the gathering's statement takes its
// snapshot, so two never split one channel's events.
//
// The email worker sends the message with the same retries as a webhook
// and records each attempt on the message and on its events together; the
// Message-ID, derived from the message's key, is the same on every attempt.
package notify
