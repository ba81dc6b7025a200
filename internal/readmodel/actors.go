package readmodel

// The actors of checks that no user started, as check_runs.actor records
// them (a user's check records the user's email).
const (
	// ActorCron is the schedule, and the catch-up check at start.
	ActorCron = "cron"
	// ActorCLI is `upcheck check`.
	ActorCLI = "cli"
	// ActorDemo is the demo's first check, which `serve --demo` runs at
	// start so a newcomer sees results at once.
	ActorDemo = "demo"
)
