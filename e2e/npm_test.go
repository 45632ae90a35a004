package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// skipUnlessCI skips the test, saying why; in CI (CI=true) it fails it:
// what the tests need must be there in CI.
func skipUnlessCI(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("unavailable in CI: %s", msg)
	}
	t.Skipf("unavailable, test skipped: %s", msg)
}

// npmInstalls keeps two tests from running npm ci in one folder at once.
var npmInstalls sync.Map // folder -> *sync.Mutex

// npmInstall makes sure the test-only npm folder dir (e2e/interop,
// e2e/clients, e2e/packaging) holds what it needs: missing names what is
// not installed yet, and when it names anything, `npm ci` runs in dir. A
// machine that cannot install it skips the test (skipUnlessCI).
func npmInstall(t *testing.T, dir string, missing func() []string) {
	t.Helper()
	mu, _ := npmInstalls.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if len(missing()) == 0 {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipUnlessCI(t, "npm is not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		skipUnlessCI(t, "npm ci in e2e/%s failed: %v\n%s", dir, err, out)
	}
	if m := missing(); len(m) > 0 {
		skipUnlessCI(t, "npm ci in e2e/%s installed no %s", dir, strings.Join(m, ", "))
	}
}
