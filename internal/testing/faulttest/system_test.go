//go:build faults

package faulttest

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// timings: a 3 s lease renewed every 500 ms; a 2 s manual cooldown so the
// clients' presses often run; lease transactions cut off after 1 s.
const (
	timings  = "lease=3s,heartbeat=500ms,cooldown=2s,tx=1s"
	lease    = 3 * time.Second
	schedule = "@every 4s" // robfig/cron's descriptor: a scheduled check every 4 s
)

// system is the database, the proxies, the instances and the publishers of
// one workload.
type system struct {
	t         *testing.T
	cl        *devdb.Cluster
	db        string
	pool      *pgxpool.Pool // direct, for the nemesis and the checker
	toxi      *toxiproxy.ApiServer
	proxies   []*toxiproxy.Proxy
	instances []*instance
	pubs      *publishers
	feeds     *feeder   // the advisory feed (feeds_test.go)
	rcv       *receiver // the webhook channel's receiver
	token     string
	bin       string
	direct    []string // the environment of a command run without a proxy
	// actions are the faults the nemesis causes, comma-separated; ""
	// every one (UPCHECK_FAULT_ACTIONS, else the test's choice).
	actions string
}

// newSystem starts a private cluster of its own (the nemesis stops it),
// a fresh database, one proxy per instance, the publishers, and n
// instances of bin, after migrating, syncing the manifest and creating an
// admin's API token.
func newSystem(t *testing.T, name, bin string, n int) *system {
	ctx := context.Background()
	// Durable (not Fast): with synchronous_commit off a crash would lose
	// transactions that had answered committed, which upcheck's
	// production database never does.
	cl, err := devdb.Ensure(ctx, filepath.Join("..", "..", "..", ".data", "faults-"+name), devdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Start(context.Background()) }) // never leave it stopped
	s := &system{t: t, cl: cl, db: fmt.Sprintf("faults_%d", time.Now().UnixNano()), actions: os.Getenv("UPCHECK_FAULT_ACTIONS")}
	if err := cl.CreateDatabase(ctx, s.db); err != nil {
		t.Fatal(err)
	}
	if s.pool, err = pgxpool.New(ctx, cl.URL(s.db)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.pool.Close)
	s.pubs = newPublishers(t, 4)
	s.feeds = newFeeder(t, s.pubs.packages())
	base := []string{
		"UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_TEST_TIMINGS=" + timings + "," + delivery,
		"UPCHECK_CHECK_SCHEDULE=" + schedule,
		"UPCHECK_FETCH_TIMEOUT=5s",
		"UPCHECK_LOG_LEVEL=" + cmp.Or(os.Getenv("UPCHECK_FAULT_LOG_LEVEL"), "INFO"),
		"UPCHECK_MANIFEST=" + s.pubs.manifest(t),
		"UPCHECK_FEEDS=" + s.feeds.setting(),
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}
	direct := append(append([]string{}, base...), "UPCHECK_DATABASE_URL="+cl.URL(s.db))
	s.bin, s.direct = bin, direct
	s.run(bin, direct, "", "migrate")
	s.run(bin, direct, "", "components", "sync")
	s.audit()
	s.run(bin, direct, "fault test password\n", "user", "add", "--email", "ops@faults.test", "--role", "admin")
	out := s.run(bin, direct, "", "token", "create", "--email", "ops@faults.test")
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "upc_") {
			s.token = strings.TrimSpace(line)
		}
	}
	if s.token == "" {
		t.Fatalf("no token in %q", out)
	}
	// A webhook channel for security events: every even sequence of a
	// source is a security release, so deliveries run all through the
	// faults. (Not every event type: a write with events to queue goes
	// through a fenced transaction instead of the one-round-trip batch,
	// and the batch is the write a slow holder can get through late.)
	s.rcv = newReceiver(t)
	out = strings.TrimSpace(s.run(bin, direct, "", "notify", "add", "webhook", "--url", s.rcv.URL, "--events", "security"))
	secret := out[strings.LastIndex(out, "\n")+1:]
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("no signing secret on the last line of %q", out)
	}
	s.rcv.setSecret(secret)

	s.toxi = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	for i := range n {
		p := toxiproxy.NewProxy(s.toxi, fmt.Sprintf("pg%d", i), "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", cl.Port))
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		s.proxies = append(s.proxies, p)
		url := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", devdb.Superuser, p.Listen, s.db)
		in := &instance{i: i, bin: bin, env: append(append([]string{}, base...), "UPCHECK_DATABASE_URL="+url), port: freePort(t)}
		s.instances = append(s.instances, in)
		in.start(t)
		t.Cleanup(func() {
			in.stop()
			if t.Failed() {
				path := filepath.Join(os.TempDir(), fmt.Sprintf("%s-instance-%d.log", s.db, i))
				if err := os.WriteFile(path, []byte(in.output()), 0o644); err != nil {
					t.Error(err)
				}
				t.Logf("output of instance %d: %s", i, path)
			}
		})
	}
	return s
}

// run runs an upcheck command to its end and returns its output.
func (s *system) run(bin string, env []string, stdin string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("upcheck %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// audit installs the checker's commit-time record of writes: a deferred
// constraint trigger on every table a check writes with its epoch, which
// at COMMIT records the row's epoch beside the lease's epoch and liveness
// as committed at that moment. A write rolled back leaves no record, so
// the table lists exactly the committed writes. Test instrumentation, not
// part of upcheck's schema.
func (s *system) audit() {
	s.exec(`
CREATE TABLE fault_writes (
    id          bigserial   PRIMARY KEY,
    tbl         text        NOT NULL,
    key         text        NOT NULL,
    epoch       bigint      NOT NULL,
    at          timestamptz NOT NULL,
    lease_epoch bigint      NOT NULL,
    lease_live  boolean     NOT NULL
);
CREATE FUNCTION fault_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l record;
BEGIN
    SELECT epoch, (owner IS NOT NULL AND expires_at > clock_timestamp()) AS live INTO l
    FROM core_update_lock WHERE name = 'check';
    INSERT INTO fault_writes (tbl, key, epoch, at, lease_epoch, lease_live)
    VALUES (TG_TABLE_NAME, to_jsonb(NEW) ->> TG_ARGV[0], NEW.epoch, clock_timestamp(), l.epoch, l.live);
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON sources
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('url');
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON component_results
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('code');
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON source_sequences
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('url');
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON source_trust
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('url');
-- An event a check queued carries its epoch; one a manifest sync queued
-- has none. Deliveries update the row later, outside the lease.
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT ON notification_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.epoch IS NOT NULL) EXECUTE FUNCTION fault_audit('key');`)
	s.auditFeeds()
}

func (s *system) exec(sql string, args ...any) {
	s.t.Helper()
	if _, err := s.pool.Exec(context.Background(), sql, args...); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

// holder is the instance whose check of epoch has started and not ended,
// from its log.
func (s *system) holder(epoch int64) *instance {
	want := strconv.FormatInt(epoch, 10)
	for _, in := range s.instances {
		out := in.output()
		running := false
		for _, m := range checkLogRE.FindAllStringSubmatch(out, -1) {
			if m[2] == want {
				running = m[1] == "started"
			}
		}
		if running {
			return in
		}
	}
	return nil
}

var checkLogRE = regexp.MustCompile(`msg="update check (started|ended)".* epoch=(\d+)`)

// instance is one `upcheck serve` on a fixed port, started again on the
// same port after a kill.
type instance struct {
	i    int
	bin  string
	env  []string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  []*testkit.Buffer
}

func (in *instance) addr() string { return "127.0.0.1:" + strconv.Itoa(in.port) }

// start runs serve; it does not wait for it to listen (the database may
// be down, and serve then waits for it).
func (in *instance) start(t *testing.T) {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := &testkit.Buffer{}
	cmd := exec.Command(in.bin, "serve")
	cmd.Env = append(append([]string{}, in.env...), "UPCHECK_LISTEN="+in.addr())
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Errorf("start instance %d: %v", in.i, err)
		return
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	in.cmd, in.done = cmd, done
	in.out = append(in.out, out)
}

// signal sends sig to the running process; false when none runs.
func (in *instance) signal(sig syscall.Signal) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return false
	}
	select {
	case <-in.done:
		return false
	default:
	}
	return in.cmd.Process.Signal(sig) == nil
}

// kill SIGKILLs the process and waits for its end.
func (in *instance) kill() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// stop ends the instance for good (SIGCONT in case it is paused, SIGTERM,
// SIGKILL after 10 s).
func (in *instance) stop() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func (in *instance) output() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var b strings.Builder
	for _, o := range in.out {
		b.WriteString(o.String())
	}
	return b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
