package devdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// StopAll stops every private cluster kept under root — what `make run`,
// `make test` and `make bench` leave running — including those placed under
// the system's temporary folder instead (see Ensure). It works as root and
// as a normal user, running pg_ctl as the user the cluster runs as, and
// reports the folders of the clusters it stopped.
func StopAll(ctx context.Context, root string) ([]string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	bin, ok := lookBinaries()
	entries, err := os.ReadDir(root)
	if !ok || errors.Is(err, os.ErrNotExist) {
		return nil, nil // no PostgreSQL, or no cluster was ever made here
	}
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		if c.runAs, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	var stopped []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		sum := sha256.Sum256([]byte(dir))
		for _, candidate := range []string{dir, filepath.Join(os.TempDir(), "upcheck-pg-"+hex.EncodeToString(sum[:6]))} {
			c.Dir = candidate
			if !isFile(filepath.Join(c.dataDir(), "PG_VERSION")) || c.run(ctx, "pg_ctl", "status", "-D", c.dataDir()) != nil {
				continue // no cluster there, or not running
			}
			if err := c.Stop(ctx); err != nil {
				return stopped, err
			}
			stopped = append(stopped, candidate)
		}
	}
	return stopped, nil
}
