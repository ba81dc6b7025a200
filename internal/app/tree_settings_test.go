package app

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// UPCHECK_LOCKFILE_DEV is one of readmodel.DevModes, separate when unset;
// anything else stops upcheck, naming the variable and the choices.
func TestLockfileDevSetting(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]readmodel.DevMode{"": readmodel.DevSeparate, " include ": readmodel.DevInclude,
		"omit": readmodel.DevOmit, "separate": readmodel.DevSeparate} {
		_, s, err := settingsFromEnv(map[string]string{"UPCHECK_LOCKFILE_DEV": value})
		if err != nil || s.LockfileDev != want {
			t.Errorf("UPCHECK_LOCKFILE_DEV=%q: %q, %v; want %q", value, s.LockfileDev, err, want)
		}
	}
	_, _, err := settingsFromEnv(map[string]string{"UPCHECK_LOCKFILE_DEV": "hide"})
	if err == nil || !strings.Contains(err.Error(), "UPCHECK_LOCKFILE_DEV") || !strings.Contains(err.Error(), "omit") {
		t.Errorf("UPCHECK_LOCKFILE_DEV=hide: %v, want a refusal naming the variable and the modes", err)
	}
}
