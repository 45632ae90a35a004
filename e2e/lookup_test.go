package e2e

// Commands found the way users expect: a server whose command is not on a
// minimal PATH (Claude Desktop's on macOS) but in nvm's bin, as npx is.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// minimalPATH is the PATH Claude Desktop gives servers on macOS.
const minimalPATH = "/usr/bin:/bin:/usr/sbin:/sbin"

// installEnv is the test's environment with HOME set to home, PATH to
// minimalPATH and none of the variables that move the install places.
func installEnv(home string) []string {
	env := environWithout("HOME", "PATH", "NVM_DIR", "VOLTA_HOME", "ASDF_DATA_DIR", "BUN_INSTALL", "CARGO_HOME")
	return append(env, "HOME="+home, "PATH="+minimalPATH, quickRaceExit)
}

func TestCommandOnlyInAnInstallPlaceIsFound(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands for npx")
	}
	// ~/.nvm/versions/node/v22.3.0/bin holds fake-node (the test server)
	// and fake-npx, a script that runs fake-node from its PATH, as npx
	// runs "#!/usr/bin/env node".
	home := t.TempDir()
	bin := filepath.Join(home, ".nvm", "versions", "node", "v22.3.0", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testserverBin, filepath.Join(bin, "fake-node")); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexec fake-node \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "fake-npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t,
		server{key: "notes", command: "fake-npx", args: []string{"-name", "notes"}},
		server{key: "gone", command: "fake-missing-server"},
	)
	cmd := exec.Command(aggregatorBin, "--config", cfg)
	cmd.Env = installEnv(home)
	s := startCmd(t, cmd)
	s.initialize("2025-11-25", "{}")
	s.startServers()

	s.waitStderr(fmt.Sprintf(`server "notes": "fake-npx" is not on PATH; found in %s`, bin))
	r := s.result("tools/call", `{"name":"notes:echo","arguments":{"input":"found"}}`)
	if got := toolText(t, r); got != `{"input":"found"}` {
		t.Errorf("notes:echo answered %q", got)
	}

	// The error says where it looked and what to do.
	looked := []string{"/opt/homebrew/bin", "/usr/local/bin"}
	if runtime.GOOS == "linux" {
		looked = append(looked, "/home/linuxbrew/.linuxbrew/bin")
	}
	looked = append(looked, bin)
	for _, d := range []string{".volta/bin", ".asdf/shims", ".local/bin", ".bun/bin", ".cargo/bin"} {
		looked = append(looked, filepath.Join(home, d))
	}
	want := fmt.Sprintf(`error: server "gone" dropped: stdio: start server "gone": "fake-missing-server" is not on PATH (%s) nor in %s: give its full path as "command" (see README.md#where-commands-are-found)`,
		minimalPATH, strings.Join(looked, ", "))
	s.waitStderr(want)
}
