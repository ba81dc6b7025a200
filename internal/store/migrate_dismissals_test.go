package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/upcheck/upcheck/migrations"
)

// Migration 00010 on a database with dismissals made before reasons and
// fingerprints were recorded: one whose advisory a stored result lists
// keeps counting, with that advisory's fingerprint and a reason saying
// none was recorded; one whose advisory no result lists ends
// ("migrated"). Down keeps the standing ones.
func TestMigration00010KeepsTheDismissalsItCanFingerprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sqlDB := stdlib.OpenDBFromPool(b.db.Pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provider.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`INSERT INTO components (code, name, installed_version, source_url) VALUES
			('core', 'Core', '1.9.0', 'https://p.example/a.json'), ('blog', 'Blog', '2.3.0', 'https://p.example/a.json')`,
		`INSERT INTO sources (url, epoch, document, document_hash, last_success_at)
			VALUES ('https://p.example/a.json', 1, 'doc', sha256('doc'), clock_timestamp())`,
		`INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, advisories,
			advisory_ids, no_fix_ids, epoch)
			VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.9.0', sha256('doc'), '[` + advisory + `]', '{ACME-1}', '{ACME-1}', 1)`,
		`INSERT INTO users (email, role, password_hash) VALUES ('ada@example.org', 'admin', 'x')`,
		`INSERT INTO advisory_dismissals (component_code, advisory_id, user_id)
			VALUES ('blog', 'ACME-1', (SELECT id FROM users)), ('blog', 'GONE-1', NULL)`,
	} {
		b.exec(t, sql)
	}
	if _, err := provider.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var reason, severity, affected, email string
	b.db.QueryRow(t, `SELECT reason, severity, affected, user_email FROM advisory_dismissals
		WHERE advisory_id = 'ACME-1' AND ended_at IS NULL`).Scan(&reason, &severity, &affected, &email)
	if reason != "No reason recorded: dismissed before upcheck asked for one." || severity != "medium" || affected != "<2.4.0" || email != "ada@example.org" {
		t.Fatalf("kept dismissal: %q %q %q %q", reason, severity, affected, email)
	}
	if v, _, _ := b.state(t); v {
		t.Fatal("the kept dismissal does not count: blog is vulnerable")
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE advisory_id = 'GONE-1' AND ended_how = 'migrated'"); n != 1 {
		t.Fatal("the dismissal of an advisory no result lists was not ended")
	}
	if _, err := provider.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE advisory_id = 'ACME-1'"); n != 1 {
		t.Fatalf("down: %d rows of the standing dismissal, want 1", n)
	}
	if _, err := provider.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
