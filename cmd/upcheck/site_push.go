package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
)

// pushTimeout bounds one push: the upload, the write and the evaluation
// of the tree's findings the answer waits for.
const pushTimeout = 5 * time.Minute

// runSitePush is `upcheck site push --url URL --token-file F LOCKFILE`,
// run by a registered site's deploy step where no database is: it PUTs
// the lockfile to URL (the site's push address,
// https://HOST/api/sites/NAME/lockfile) with the push token read from F,
// the lockfile's name (package-lock.json, npm-shrinkwrap.json,
// pnpm-lock.yaml) as ?name=, and prints the answer; a refusal is an error
// (exit status 1) saying upcheck's words.
func runSitePush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var target, tokenFile string
	pos, err := interspersed("site push", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&target, "url", target, "the site's push address: https://HOST/api/sites/NAME/lockfile")
		fs.StringVar(&tokenFile, "token-file", tokenFile, "a file holding the site's push token (site add, site rotate)")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 || target == "" || tokenFile == "" {
		fmt.Fprintf(stderr, "upcheck site push: --url, --token-file and one LOCKFILE are required\n%s", helpPointer("site"))
		return errUsage
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("site push: --url %q is not an http(s) address", target)
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return fmt.Errorf("site push: read the token: %w", err)
	}
	raw := strings.TrimSpace(string(token))
	if raw == "" {
		return fmt.Errorf("site push: %s holds no token", tokenFile)
	}
	body, err := readPushed(pos[0])
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("name", filepath.Base(pos[0]))
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("site push: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+raw)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("site push: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("site push: read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(answer, &e) == nil && e.Error != "" {
			return fmt.Errorf("site push: refused (%d): %s", resp.StatusCode, e.Error)
		}
		return fmt.Errorf("site push: refused (%s)", resp.Status)
	}
	_, err = stdout.Write(answer)
	return err
}

// readPushed reads the lockfile to push, up to what upcheck accepts.
func readPushed(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("site push: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, lockfile.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("site push: read %s: %w", file, err)
	}
	if len(body) > lockfile.MaxSize {
		return nil, errors.New("site push: " + file + " is larger than upcheck accepts")
	}
	return body, nil
}
