package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The npm and lockfile settings: read once, as the operator wrote them
// (internal/app's TestSettingsFrom reads them by the npm, lockfile and
// manifest packages' rules), and every refusal of their syntax names its
// variable (never a credential the value carried).
func TestNpmAndLockfileSettings(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.NpmRegistry != "" || c.Npmrc != "" || c.NpmMaxDocument != 0 || c.NpmDependencyDocuments != nil ||
		c.Lockfile != "" || c.LockfileInclude != nil || c.LockfileCore != "" || c.LockfilePolicy != "" || c.Timings.Lockfile != nil {
		t.Fatalf("npm defaults = %+v", c)
	}
	c, err = FromEnv(env(map[string]string{
		"UPCHECK_NPM_REGISTRY":             " https://npm.example.org/repository/npm ",
		"UPCHECK_NPMRC":                    "/srv/site/.npmrc",
		"UPCHECK_NPM_MAX_DOCUMENT":         "1048576",
		"UPCHECK_NPM_DEPENDENCY_DOCUMENTS": "0",
		"UPCHECK_LOCKFILE":                 "/srv/site/pnpm-lock.yaml",
		"UPCHECK_LOCKFILE_INCLUDE":         " @vitnode/*, ,left-pad,",
		"UPCHECK_LOCKFILE_CORE":            "@vitnode/core",
		"UPCHECK_LOCKFILE_POLICY":          ` {"offer": "patch", "soak": "3d"} `,
		"UPCHECK_TEST_TIMINGS":             "lockfile=50ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.NpmRegistry != "https://npm.example.org/repository/npm" || c.Npmrc != "/srv/site/.npmrc" || c.NpmMaxDocument != 1<<20 ||
		c.NpmDependencyDocuments == nil || *c.NpmDependencyDocuments != 0 || c.Lockfile != "/srv/site/pnpm-lock.yaml" || !slices.Equal(c.LockfileInclude, []string{"@vitnode/*", "left-pad"}) ||
		c.LockfileCore != "@vitnode/core" || c.LockfilePolicy != `{"offer": "patch", "soak": "3d"}` ||
		c.Timings.Lockfile == nil || *c.Timings.Lockfile != 50*time.Millisecond {
		t.Fatalf("npm settings = %+v", c)
	}
	// The .npmrc's ${NAME} references are read, at open, from the same
	// environment.
	if c.Env == nil || c.Env("UPCHECK_NPMRC") != "/srv/site/.npmrc" {
		t.Fatal("Config.Env is not the environment FromEnv read")
	}

	for _, bad := range []struct {
		env   map[string]string
		names string
	}{
		{map[string]string{"UPCHECK_NPM_MAX_DOCUMENT": "64MiB"}, "UPCHECK_NPM_MAX_DOCUMENT"},
		{map[string]string{"UPCHECK_NPM_MAX_DOCUMENT": "0"}, "UPCHECK_NPM_MAX_DOCUMENT"},
		{map[string]string{"UPCHECK_NPM_MAX_DOCUMENT": "-5"}, "UPCHECK_NPM_MAX_DOCUMENT"},
		{map[string]string{"UPCHECK_NPM_DEPENDENCY_DOCUMENTS": "-1"}, "UPCHECK_NPM_DEPENDENCY_DOCUMENTS"},
		{map[string]string{"UPCHECK_NPM_DEPENDENCY_DOCUMENTS": "many"}, "UPCHECK_NPM_DEPENDENCY_DOCUMENTS"},
		{map[string]string{"UPCHECK_MANIFEST": "/srv/m.yaml", "UPCHECK_LOCKFILE": "/srv/package-lock.json"}, "UPCHECK_MANIFEST and UPCHECK_LOCKFILE"},
		{map[string]string{"UPCHECK_TEST_TIMINGS": "lockfile=0s"}, "UPCHECK_TEST_TIMINGS"},
	} {
		_, err := FromEnv(env(bad.env))
		if err == nil || !strings.Contains(err.Error(), bad.names) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: error %v, want one naming %s (and no credential)", bad.env, err, bad.names)
		}
	}
}
