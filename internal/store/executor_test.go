package store_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// fenced is why a write of a check stays on Tx: it commits only behind the
// lease's fence (LeaseBeginFence, lease.Manager.WithLease) in the same
// transaction.
const fenced = "a check's write: it commits only behind the lease's fence, taken first in the same transaction (lease.Manager.WithLease)"

// jobs is why an event write stays on Tx: a pending event or message
// without its delivery job would never be sent.
const jobs = "makes events or messages pending that need their delivery jobs inserted in the same transaction (Tx.Pgx, River's InsertTx)"

// txOnly is every operation that only Tx has, and why it is only right
// inside a transaction. Any other operation is written on Executor, so
// that Store and Tx both have it, once.
var txOnly = map[string]string{
	"Pgx": "it is the transaction itself, for River's InsertTx",

	"LeaseBegin":        "its time limits (SET LOCAL) and the lease's advisory lock last until the transaction ends",
	"LeaseBeginFence":   "its time limits, advisory lock and row lock last until the transaction ends, and fence the writes after it",
	"LeaseGetForUpdate": "its row lock (FOR UPDATE) lasts until the transaction ends",
	"LeaseTake":         "writes the lease row under the locks LeaseBegin and LeaseGetForUpdate took in the same transaction, in that order",
	"LeaseRenew":        "writes the lease row under the advisory lock LeaseBegin took in the same transaction",
	"LeaseRelease":      "writes the lease row under the advisory lock LeaseBegin took in the same transaction",

	"UserPasswordHashForShare": "its row lock (FOR SHARE) keeps the password from changing until the transaction ends",

	"SourceSaveDocument":  fenced,
	"SourceSaveUnchanged": fenced,
	"SourceSaveFailure":   fenced,
	"SourceTrustSave":     fenced + ", after the source's row",
	"ResultWrite":         fenced,
	"CleanUp":             fenced,
	"ComponentUpsertMany": "holds the lease's advisory lock from LeaseBegin in the same transaction (lease.Manager.WithLock), so that it never interleaves with a check's fenced writes",
	"ComponentDelete":     "holds the lease's advisory lock from LeaseBegin in the same transaction (lease.Manager.WithLock), so that it never interleaves with a check's fenced writes",
	"SitePolicySet":       "writes the site's policy and its components' in one transaction under the lease's advisory lock (lease.Manager.WithLock), as ComponentUpsertMany, so that a check's fenced writes see the components under one policy or the other",

	"SkipPut":                 "writes its audit row in the same transaction, which holds the lease's lock (lease.Manager.WithLock): a skip is an input of evaluation, as a component row is",
	"SkipDelete":              "writes its audit row in the same transaction, which holds the lease's lock (lease.Manager.WithLock): a skip is an input of evaluation, as a component row is",
	"ApplyManifestSkips":      "written with the manifest sync's component rows, under the lease's lock (lease.Manager.WithLock), with their audit rows",
	"ApprovalPut":             "writes its audit row in the same transaction, which holds the lease's lock (lease.Manager.WithLock): an approval is an input of evaluation, as a skip is",
	"ApplyManifestApprovals":  "written with the manifest sync's skips, under the lease's lock (lease.Manager.WithLock), with their audit rows",
	"ApplyManifestDismissals": "written with the manifest sync's component rows, in one transaction with their audit rows",
	"PinDowngradePut":         "written with the manifest sync's component rows that lowered the pin, and the audit row saying so",
	"treePackagesWrite":       "TreeWrite's packages, after its state row's lock",
	"treeEdgesWrite":          "TreeWrite's edges, after its state row's lock",
	"TreeWrite":               "its state row's lock (FOR UPDATE) and the lease's advisory lock (lease.Manager.WithLock) last until the commit: the whole tree or nothing, never beside another sync's",

	"TreeFixesSave":        fenced,
	"TreeFixDocumentsSave": fenced,
	"SitePushed":           "moves pushed_at with the push's audit row, in the transaction that writes the pushed tree",
	"TreeFindingsWrite":    fenced + ": the whole set of findings with what it was evaluated at; ErrTreeMoved rolls it back",
	"TreeExposureAudit":    "the audit row of an exposure, in the fenced transaction that writes the exposure",
	"FeedBegin":            fenced,
	"FeedComplete":         fenced + ", after the re-evaluation it clears the pending components of",
	"FeedFail":             fenced,
	"OSVStore":             fenced + ", with IntelBump and the marks of the components it affects",
	"IntelBump":            fenced + ": the version moves with the change it counts",
	"IntelMarkPackages":    fenced + ", in the batch that changed the packages' records",
	"IntelMarkByKeys":      fenced + ", in the transaction that changed the catalogue or scores",
	"KEVReplace":           fenced + ": the catalogue is replaced in one transaction",
	"EPSSReplace":          fenced + ": its staging table lives until the transaction ends",

	"EventPlan":                 jobs,
	"EventPlanSourceFailing":    jobs,
	"EventPlanOverdue":          jobs,
	"EventPlanRegistryKeys":     jobs,
	"EventPlanPinDowngrade":     jobs,
	"EventPlanTreeExposed":      jobs,
	"EventPlanTreeFindings":     jobs + ", in the evaluation's fenced transaction that wrote the findings new in it",
	"EventPlanSiteTreeFindings": jobs + ", in the evaluation's fenced transaction that wrote the findings new in it",
	"EventPlanFleetFindings":    jobs + ", with the sites it tells (notification_fleet_told), in the evaluation's fenced transaction",
	"EventPlanSites":            jobs + ", with the sites it tells (notification_fleet_component_told), in the transaction that writes the results",
	"TreeSitesMoved":            "read in the evaluation's fenced transaction, before TreeFindingsWrite records the trees evaluated",
	"TreeFixesDeleteStale":      fenced + ": in the evaluation's, after the findings it writes",
	"RegistryKeysSave":          fenced + ", with the row of the first of the registry's sources written",
	"NpmDependencySave":         fenced + ", with the row of the source whose update added the dependencies",
	"NpmProvenanceSave":         fenced + ", with the row of the source whose offer the versions are",
	"NpmScopeBurstSave":         fenced + ", once every source of the check was written",
	"TreeBringsSave":            fenced + ": what a check read of the lockfile changes, with their notifications",
	"EventPlanTreeBrings":       jobs + ", in the check's fenced transaction that wrote what the changes brought",
	"EventCreateTest":           jobs,
	"EventRetry":                jobs,
	"EventReleaseHeld":          jobs,
	"MessageRetry":              jobs,
	"MessageReleaseHeld":        jobs,
	"MessageGather":             "gatherings take turns on a transaction-level advisory lock, taken first; " + jobs,
	"ChannelCreate":             "an enabled channel commits with the events outstanding for it (upcheck_nothing_to_queue), queued in the same transaction",
	"ChannelSetEnabled":         "a channel turned on commits with its held events released and its outstanding events queued, in the same transaction",
}

// storeOnly is every operation that only Store has, and why.
var storeOnly = map[string]string{
	"Ping":              "asks the pool",
	"WithTx":            "begins a transaction on the pool",
	"ReadTx":            "begins a read-only, repeatable-read transaction on the pool",
	"withTx":            "begins a transaction on the pool (WithTx's and ReadTx's)",
	"SendBatch":         "a pipelined batch runs as a transaction of its own",
	"DismissAdvisory":   "runs a transaction of its own (the dismissal and its audit row)",
	"UndismissAdvisory": "runs a transaction of its own (the end of the dismissal and its audit row)",
	"TreeEach":          "reads its pages in one repeatable-read transaction of its own (ReadTx), so all are of one tree",
	"TreeFixInput":      "reads the tree and its findings in one repeatable-read transaction of its own (ReadTx), so all are of one tree",
	"TreeToMatch":       "reads the sites and their versions in one repeatable-read transaction of its own (ReadTx), so all are of one state",

	"RefreshSiteComponentCounts": "runs each batch of sites in a transaction of its own, after the writes it counts committed",

	"DismissTreeAdvisory":   "runs a transaction of its own (the dismissal and its audit row)",
	"UndismissTreeAdvisory": "runs a transaction of its own (the end of the dismissal and its audit row)",
}

// storeMethods is the methods declared in package store's own files, by
// receiver type name.
func storeMethods(t *testing.T) map[string]map[string]token.Position {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]map[string]token.Position{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok {
				continue
			}
			if out[id.Name] == nil {
				out[id.Name] = map[string]token.Position{}
			}
			out[id.Name][fn.Name.Name] = fset.Position(fn.Pos())
		}
	}
	if len(out["Executor"]) == 0 || len(out["Store"]) == 0 || len(out["Tx"]) == 0 {
		t.Fatalf("found methods on Executor (%d), Store (%d) and Tx (%d): the scan is broken",
			len(out["Executor"]), len(out["Store"]), len(out["Tx"]))
	}
	return out
}

// Every operation is written once: on Executor when it is right both on the
// pool and in a transaction, else on Store (it needs the pool) or on Tx (it
// is only right inside a transaction), each with its reason listed above.
func TestOperationsAreWrittenOnce(t *testing.T) {
	m := storeMethods(t)
	for name, at := range m["Store"] {
		if tx, ok := m["Tx"][name]; ok {
			t.Errorf("%s: Store.%s is written again as Tx.%s (%s): write it once, on Executor", at, name, name, tx)
		}
		if e, ok := m["Executor"][name]; ok {
			t.Errorf("%s: Store.%s hides Executor.%s (%s)", at, name, name, e)
		}
		if storeOnly[name] == "" {
			t.Errorf("%s: Store.%s: write it on Executor (e *Executor, e.dbtx) so that Tx has it too, or list in storeOnly why it needs the pool", at, name)
		}
	}
	for name, at := range m["Tx"] {
		if e, ok := m["Executor"][name]; ok {
			t.Errorf("%s: Tx.%s hides Executor.%s (%s)", at, name, name, e)
		}
		if txOnly[name] == "" {
			t.Errorf("%s: Tx.%s: write it on Executor (e *Executor, e.dbtx) so that Store has it too, or list in txOnly why it is only right inside a transaction", at, name)
		}
	}
	var gone []string
	for name := range txOnly {
		if _, ok := m["Tx"][name]; !ok {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		t.Errorf("txOnly lists %s, which Tx does not declare", name)
	}
	gone = gone[:0]
	for name := range storeOnly {
		if _, ok := m["Store"][name]; !ok {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		t.Errorf("storeOnly lists %s, which Store does not declare", name)
	}
}

// An operation takes its DBTX from its receiver: a function that takes one
// as a parameter is the shape of an operation written twice, once per
// executor, over a shared helper.
func TestNoFunctionTakesADBTX(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			ft, ok := n.(*ast.FuncType)
			if !ok {
				return true
			}
			for _, p := range ft.Params.List {
				if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "DBTX" {
					t.Errorf("%s: a function takes a db.DBTX: write the operation once, on Executor", fset.Position(p.Pos()))
				}
			}
			return true
		})
	}
	if scanned == 0 {
		t.Fatal("no file scanned")
	}
}

// An Executor operation called on a Tx runs in that transaction: what it
// writes is seen inside it, not from the pool before the commit, and goes
// with a rollback.
func TestTxOperationsRunInTheTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rollBack := errors.New("roll back")
	err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserCreate(ctx, "ada@example.org", "admin", "$argon2id$x")
		if err != nil {
			return err
		}
		if err := tx.AuditAppend(ctx, u.ID, "test.tx", nil); err != nil {
			return err
		}
		if got, err := tx.UserByEmail(ctx, "ada@example.org"); err != nil || got != u {
			t.Errorf("in the transaction: UserByEmail = %+v, %v; want %+v", got, err, u)
		}
		if _, err := b.st.UserByEmail(ctx, "ada@example.org"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("from the pool before the commit: UserByEmail: %v, want ErrNotFound", err)
		}
		return rollBack
	})
	if !errors.Is(err, rollBack) {
		t.Fatalf("WithTx: %v, want the function's error", err)
	}
	if _, err := b.st.UserByEmail(ctx, "ada@example.org"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the rollback: UserByEmail: %v, want ErrNotFound", err)
	}
	if n := b.count(t, `SELECT count(*) FROM audit_log WHERE action = 'test.tx'`); n != 0 {
		t.Errorf("after the rollback: %d audit rows, want 0", n)
	}

	if err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.UserCreate(ctx, "ada@example.org", "admin", "$argon2id$x")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.UserByEmail(ctx, "ada@example.org"); err != nil {
		t.Errorf("after the commit: UserByEmail: %v", err)
	}
}
