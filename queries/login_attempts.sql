-- Login throttling. A key is "ip:<address>" (per address),
-- "email:<lower email> ip:<address>" (per account and address) or
-- "email:<lower email>" (per account, counted only from addresses that have
-- not signed in to it lately: login_known_addresses). Every
-- attempt is registered before its password is checked, and a success gives
-- its count back: registering first means that guesses sent in parallel are
-- counted one by one under the row lock and cannot all slip in before the
-- limit is seen. Windows and locks are judged on the database clock.

-- name: LoginAttemptRegister :one
-- In the ON CONFLICT branch, "a" is the stored row and EXCLUDED.window_start
-- is this statement's clock. Three cases:
--   still locked           -> nothing changes and no row comes back: the
--                             attempt is refused (LoginAttemptLockedFor
--                             says for how long);
--   lock ended, or window  -> a new window starts with this attempt;
--   over
--   otherwise              -> one more attempt in the current window.
-- An attempt that takes the count past max_failures locks the key and is
-- itself refused. retry_after_seconds is 0 when the attempt may proceed.
-- A row that comes back locked was locked by this statement, so the lock
-- is audited here, in the same statement: one audit_log row per lock
-- (audit_detail, plus the attempts counted and the lock's end), never one
-- per refused attempt, and never a lock without its row.
WITH reg AS (
    INSERT INTO login_attempts AS a (key, failures, window_start, locked_until)
    VALUES (@key::text, 1, clock_timestamp(),
            CASE WHEN 1 > @max_failures::int
                 THEN clock_timestamp() + make_interval(secs => @lockout_seconds::float8) END)
    ON CONFLICT (key) DO UPDATE
    SET failures = CASE
            WHEN a.locked_until IS NOT NULL
              OR a.window_start <= EXCLUDED.window_start - make_interval(secs => @window_seconds::float8) THEN 1
            ELSE a.failures + 1 END,
        window_start = CASE
            WHEN a.locked_until IS NOT NULL
              OR a.window_start <= EXCLUDED.window_start - make_interval(secs => @window_seconds::float8) THEN EXCLUDED.window_start
            ELSE a.window_start END,
        locked_until = CASE
            WHEN (CASE WHEN a.locked_until IS NOT NULL
                         OR a.window_start <= EXCLUDED.window_start - make_interval(secs => @window_seconds::float8) THEN 1
                       ELSE a.failures + 1 END) > @max_failures::int
                THEN EXCLUDED.window_start + make_interval(secs => @lockout_seconds::float8)
            END
    WHERE a.locked_until IS NULL OR a.locked_until <= EXCLUDED.window_start
    RETURNING a.failures, a.locked_until
), audited AS (
    INSERT INTO audit_log (action, detail)
    SELECT @audit_action::text,
           @audit_detail::jsonb || jsonb_build_object(
               'attempts', reg.failures,
               'locked_until', to_char(reg.locked_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
    FROM reg
    WHERE reg.locked_until IS NOT NULL
    RETURNING id
)
SELECT (CASE WHEN reg.locked_until > clock_timestamp()
             THEN greatest(1, ceil(extract(epoch FROM reg.locked_until - clock_timestamp())))
             ELSE 0 END)::bigint AS retry_after_seconds,
       (reg.locked_until IS NOT NULL)::bool AS locked_now
FROM reg;

-- name: LoginAttemptLockedFor :one
-- How long a key stays locked, in whole seconds (0: no longer), for an
-- attempt LoginAttemptRegister refused without counting it.
SELECT (CASE WHEN locked_until > clock_timestamp()
             THEN greatest(1, ceil(extract(epoch FROM locked_until - clock_timestamp())))
             ELSE 0 END)::bigint AS retry_after_seconds
FROM login_attempts
WHERE key = @key;

-- name: LoginAttemptReset :exec
-- A successful login clears the count of its account and address, unless a
-- lock was set meanwhile by attempts running in parallel: that lock stands.
DELETE FROM login_attempts
WHERE key = @key
  AND (locked_until IS NULL OR locked_until <= clock_timestamp());

-- name: LoginAttemptGiveBack :exec
-- A successful login does not count against its address, nor against its
-- account, whose count it does not clear: the failures from other addresses
-- stand.
UPDATE login_attempts
SET failures = greatest(failures - 1, 0)
WHERE key = @key AND locked_until IS NULL;

-- name: LoginAttemptPurge :execrows
-- Rows that no longer hold anything back: an ended lock, or an unlocked
-- window that is over.
DELETE FROM login_attempts
WHERE (locked_until IS NOT NULL AND locked_until <= clock_timestamp())
   OR (locked_until IS NULL AND window_start <= clock_timestamp() - make_interval(secs => @window_seconds::float8));
