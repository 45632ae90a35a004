package e2e

// The packages users install, used as users' hosts use them: the Claude
// Desktop extension checked by the official MCPB CLI and its binary started
// as the manifest says, and the npm packages installed offline from their
// tarballs and run through the launcher with npx.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcpbConfig is a manifest's mcp_config, or one of its platform_overrides.
type mcpbConfig struct {
	Command           string                `json:"command"`
	Args              []string              `json:"args"`
	Env               map[string]string     `json:"env"`
	PlatformOverrides map[string]mcpbConfig `json:"platform_overrides"`
}

// mcpbManifest is the part of manifest.json a host needs to start the server.
type mcpbManifest struct {
	Server struct {
		Type       string     `json:"type"`
		EntryPoint string     `json:"entry_point"`
		MCPConfig  mcpbConfig `json:"mcp_config"`
	} `json:"server"`
	UserConfig map[string]struct {
		Type     string `json:"type"`
		Required bool   `json:"required"`
	} `json:"user_config"`
}

// runTool runs a command line tool within waitLimit and returns its
// combined output, failing the test unless it exits with status 0.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
	}
	return string(out)
}

func TestPackagingClaudeDesktopBundle(t *testing.T) {
	dir, _ := releaseOutput(t)
	mcpb := requireMCPB(t)
	bundle := filepath.Join(dir, bundleName)

	info := runTool(t, "", nil, mcpb, "info", bundle)
	if !strings.Contains(info, "File: "+bundleName) {
		t.Errorf("mcpb info does not name the bundle:\n%s", info)
	}
	unpacked := t.TempDir()
	runTool(t, "", nil, mcpb, "unpack", bundle, unpacked)
	manifestPath := filepath.Join(unpacked, "manifest.json")
	if out := runTool(t, "", nil, mcpb, "validate", manifestPath); !strings.Contains(out, "validation passes") {
		t.Errorf("mcpb validate:\n%s", out)
	}

	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m mcpbManifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if m.Server.Type != "binary" {
		t.Errorf("server.type %q, want binary", m.Server.Type)
	}
	if _, err := os.Stat(filepath.Join(unpacked, m.Server.EntryPoint)); err != nil {
		t.Errorf("server.entry_point: %v", err)
	}
	cfg := m.Server.MCPConfig
	key := strings.TrimSuffix(strings.TrimPrefix(cfg.Args[len(cfg.Args)-1], "${user_config."), "}")
	if uc := m.UserConfig[key]; len(cfg.Args) != 2 || cfg.Args[0] != "--config" || uc.Type != "file" || !uc.Required {
		t.Fatalf("mcp_config.args %q: want --config and a required user_config of type file, got %+v", cfg.Args, m.UserConfig)
	}

	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the bundle's linux binary is for linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	startAsHost(t, cfg, unpacked, key)
}

// startAsHost starts the server of an unpacked bundle as a host does on
// linux: mcp_config with linux's overrides, ${__dirname} the unpacked
// bundle, a config file the user's choice for user_config key; then it
// makes a real session through it.
func startAsHost(t *testing.T, cfg mcpbConfig, unpacked, key string) {
	t.Helper()
	if o, ok := cfg.PlatformOverrides["linux"]; ok && o.Command != "" {
		cfg.Command = o.Command
	}
	userFile := writeConfig(t, ts("alpha"))
	expand := strings.NewReplacer("${__dirname}", unpacked, "${user_config."+key+"}", userFile).Replace
	var args []string
	for _, a := range cfg.Args {
		args = append(args, expand(a))
	}
	cmd := exec.Command(expand(cfg.Command), args...)
	cmd.Env = append(os.Environ(), emptyCache(t))
	s := startCmd(t, cmd)
	ini := parseInit(t, s.initialize("2025-11-25", "{}"))
	if ini.ServerInfo.Name != "mcp-simple-aggregator" || ini.ServerInfo.Version != testVersion {
		t.Errorf("serverInfo %+v, want mcp-simple-aggregator %s", ini.ServerInfo, testVersion)
	}
	r := s.result("tools/call", `{"name":"alpha:echo","arguments":{"via":"bundle"}}`)
	if got := toolText(t, r); got != `{"via":"bundle"}` {
		t.Errorf("alpha:echo through the bundle's binary answered %q", got)
	}
	if s.closeAndWait(); s.err != nil {
		t.Errorf("the bundle's binary exited with %v", s.err)
	}
}

// npmTools returns the paths of npm and npx.
func npmTools(t *testing.T) (npm, npx string) {
	t.Helper()
	npm = requireNPM(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		skipUnlessCI(t, "npx is not installed: %v", err)
	}
	return npm, npx
}

// npmInstallOffline installs tarballs into a fresh folder with an empty
// npm cache, so that nothing can come from a registry or an earlier
// install, and returns the folder and the environment npm ran with.
func npmInstallOffline(t *testing.T, npm string, flags []string, tarballs ...string) (app string, env []string) {
	t.Helper()
	app = t.TempDir()
	if err := os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false", emptyCache(t))
	args := append([]string{"install", "--offline", "--no-audit", "--no-fund"}, flags...)
	runTool(t, app, env, npm, append(args, tarballs...)...)
	return app, env
}

func TestPackagingNPMInstallOffline(t *testing.T) {
	dir, _ := releaseOutput(t)
	npm, npx := npmTools(t)
	launcher := filepath.Join(dir, launcherTarball(testVersion))
	platform := filepath.Join(dir, platformTarball(testVersion, runtime.GOOS, runtime.GOARCH))
	app, env := npmInstallOffline(t, npm, nil, launcher, platform)
	installed, err := os.ReadDir(filepath.Join(app, "node_modules", "@mcp-simple-aggregator"))
	if err != nil || len(installed) != 1 || installed[0].Name() != npmPlatform(runtime.GOOS, runtime.GOARCH) {
		t.Fatalf("node_modules/@mcp-simple-aggregator holds %v (%v), want this platform's package only", installed, err)
	}
	npxRun := func(args ...string) *exec.Cmd {
		cmd := exec.Command(npx, append([]string{"--offline", "-y", "mcp-simple-aggregator"}, args...)...)
		cmd.Dir, cmd.Env = app, env
		return cmd
	}

	if out := runTool(t, app, env, npx, "--offline", "-y", "mcp-simple-aggregator", "--version"); out != "mcp-simple-aggregator "+testVersion+"\n" {
		t.Errorf("npx mcp-simple-aggregator --version printed %q", out)
	}
	t.Run("exit status", func(t *testing.T) {
		cmd := npxRun()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), "--config PATH is required") {
			t.Errorf("without --config: exit %d (%v), stderr:\n%s\nwant exit 2 and the usage error", code, err, stderr.String())
		}
	})
	t.Run("session", func(t *testing.T) {
		s := startCmd(t, npxRun("--config", writeConfig(t, ts("alpha"))))
		if v := parseInit(t, s.initialize("2025-11-25", "{}")).ServerInfo.Version; v != testVersion {
			t.Errorf("serverInfo.version %q, want %q", v, testVersion)
		}
		r := s.result("tools/call", `{"name":"alpha:echo","arguments":{"via":"npx"}}`)
		if got := toolText(t, r); got != `{"via":"npx"}` {
			t.Errorf("alpha:echo through npx answered %q", got)
		}
		if s.closeAndWait(); s.err != nil {
			t.Errorf("npx exited with %v after stdin closed", s.err)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		launcherForwardsSIGTERM(t, filepath.Join(app, "node_modules", ".bin", "mcp-simple-aggregator"), env)
	})
	t.Run("global install", func(t *testing.T) {
		prefix := t.TempDir()
		npmInstallOffline(t, npm, []string{"--global", "--prefix", prefix}, launcher, platform)
		bin := filepath.Join(prefix, "bin", "mcp-simple-aggregator")
		if runtime.GOOS == "windows" {
			bin = filepath.Join(prefix, "mcp-simple-aggregator.cmd")
		}
		if out := runTool(t, "", env, bin, "--version"); out != "mcp-simple-aggregator "+testVersion+"\n" {
			t.Errorf("the globally installed mcp-simple-aggregator --version printed %q", out)
		}
	})
	t.Run("without its platform package", func(t *testing.T) {
		app, env := npmInstallOffline(t, npm, nil, launcher)
		cmd := exec.Command(filepath.Join(app, "node_modules", ".bin", "mcp-simple-aggregator"), "--version")
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		want := "mcp-simple-aggregator: no binary for " + npmPlatform(runtime.GOOS, runtime.GOARCH) + ": the package @mcp-simple-aggregator/"
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasPrefix(string(out), want) {
			t.Errorf("exit %d, output:\n%s\nwant exit 1 and %q...", code, out, want)
		}
	})
}

// launcherForwardsSIGTERM starts the launcher alone, as npx runs it, and
// checks that SIGTERM to it reaches the binary, which stops its servers
// and exits 0, and that the launcher then exits 0 too.
func launcherForwardsSIGTERM(t *testing.T, launcher string, env []string) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM to forward on Windows")
	}
	cmd := exec.Command(launcher, "--config", writeConfig(t, ts("alpha")))
	cmd.Env = env
	s := startCmd(t, cmd)
	s.initialize("2025-11-25", "{}")
	binaries := childPIDs(t, cmd.Process.Pid)
	if len(binaries) != 1 {
		t.Fatalf("the launcher has %d children, want 1 (the binary)", len(binaries))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(waitLimit):
		t.Fatal("the launcher did not exit after SIGTERM")
	}
	if s.err != nil {
		t.Errorf("the launcher ended with %v after SIGTERM, want exit status 0 (the binary's)", s.err)
	}
	if alive(binaries[0]) {
		t.Errorf("the binary (pid %d) outlived the launcher", binaries[0])
	}
}
