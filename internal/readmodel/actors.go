package readmodel

// The actors of checks that no user started, as check_runs.actor records
// them (a user's check records the user's email).
const (
	// ActorCron is the schedule, and the catch-up check at start.
	ActorCron = "cron"
	// ActorCLI is the command line (`upcheck check`, `upcheck source
	// import`).
	ActorCLI = "cli"
	// ActorDemo is the demo's first check, which `serve --demo` runs at
	// start so a newcomer sees results at once.
	ActorDemo = "demo"
)

// actorWords word the actors that are not users: the one vocabulary of
// the history, the audit page and its CSV.
var actorWords = map[string]string{
	ActorCron: "the schedule",
	ActorCLI:  "command line",
	ActorDemo: "the demo, at start",
}

// ActorText words who acted: one of the Actor* constants in words ("command
// line"), a user's email as it is; "" stays "".
func ActorText(actor string) string {
	if w, ok := actorWords[actor]; ok {
		return w
	}
	return actor
}
