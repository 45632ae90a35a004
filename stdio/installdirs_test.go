package stdio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func init() {
	// path prints the PATH it was started with.
	helpers["path"] = func() { fmt.Println(os.Getenv("PATH")) }
}

// mapEnv is a getenv over m.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestInstallDirs(t *testing.T) {
	t.Parallel()
	home := filepath.FromSlash("/home/me")
	j := func(parts ...string) string { return filepath.Join(append([]string{home}, parts...)...) }
	for _, tc := range []struct {
		name, goos string
		env        map[string]string
		want       []string
	}{
		{"darwin", "darwin", map[string]string{"HOME": home}, []string{
			"/opt/homebrew/bin", "/usr/local/bin", j(".nvm", "versions", "node", "*", "bin"),
			j(".volta", "bin"), j(".asdf", "shims"), j(".local", "bin"), j(".bun", "bin"), j(".cargo", "bin"),
		}},
		{"linux, tools moved by their variables", "linux", map[string]string{
			"HOME": home, "NVM_DIR": "/n", "VOLTA_HOME": "/v", "ASDF_DATA_DIR": "/a", "BUN_INSTALL": "/b", "CARGO_HOME": "/c",
		}, []string{
			"/opt/homebrew/bin", "/usr/local/bin", "/home/linuxbrew/.linuxbrew/bin",
			filepath.Join("/n", "versions", "node", "*", "bin"), filepath.Join("/v", "bin"), filepath.Join("/a", "shims"),
			j(".local", "bin"), filepath.Join("/b", "bin"), filepath.Join("/c", "bin"),
		}},
		{"no HOME", "darwin", map[string]string{}, []string{"/opt/homebrew/bin", "/usr/local/bin"}},
		{"windows", "windows", map[string]string{
			"USERPROFILE": `C:\Users\me`, "ProgramFiles": `C:\Program Files`, "APPDATA": `C:\Users\me\AppData\Roaming`,
			"LOCALAPPDATA": `C:\Users\me\AppData\Local`, "NVM_SYMLINK": `C:\nvm4w\nodejs`,
		}, []string{
			filepath.Join(`C:\Program Files`, "nodejs"), filepath.Join(`C:\Users\me\AppData\Roaming`, "npm"), `C:\nvm4w\nodejs`,
			filepath.Join(`C:\Users\me\AppData\Local`, "Volta", "bin"), filepath.Join(`C:\Users\me`, "scoop", "shims"),
			filepath.Join(`C:\Users\me`, ".local", "bin"), filepath.Join(`C:\Users\me`, ".bun", "bin"), filepath.Join(`C:\Users\me`, ".cargo", "bin"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := installDirs(tc.goos, mapEnv(tc.env)); !slices.Equal(got, tc.want) {
				t.Errorf("installDirs:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// nvm's default alias picks the node version, else the newest is taken.
func TestNvmNodeBin(t *testing.T) {
	t.Parallel()
	nvm := t.TempDir()
	versions := filepath.Join(nvm, "versions", "node")
	if got, want := nvmNodeBin(nvm), filepath.Join(versions, "*", "bin"); got != want {
		t.Errorf("no version installed: %q, want %q", got, want)
	}
	for _, v := range []string{"v18.20.0", "v20.9.0", "v20.11.0", "v22.1.0", "v9.0.0", "not-a-version"} {
		if err := os.MkdirAll(filepath.Join(versions, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeAlias := func(name, target string) {
		t.Helper()
		path := filepath.Join(nvm, "alias", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(target+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeAlias("lts/iron", "v20.9.0")
	writeAlias("lts/*", "lts/iron")
	writeAlias("loop", "loop")
	for _, tc := range []struct{ alias, want string }{
		{"", "v22.1.0"}, // no default alias: the newest (by number: v9 < v22)
		{"20", "v20.11.0"},
		{"v20.9", "v20.9.0"},
		{"18.20.0", "v18.20.0"},
		{"lts/iron", "v20.9.0"},
		{"lts/*", "v20.9.0"},
		{"node", "v22.1.0"},
		{"16", "v22.1.0"}, // not installed: the newest
		{"loop", "v22.1.0"},
	} {
		if tc.alias != "" {
			writeAlias("default", tc.alias)
		}
		if got, want := nvmNodeBin(nvm), filepath.Join(versions, tc.want, "bin"); got != want {
			t.Errorf("default alias %q: %q, want %q", tc.alias, got, want)
		}
	}
}

// A command that lies only in an install place (here ~/.local/bin of a fake
// HOME) is found with a PATH that lacks it, and its directory is put first
// in the child's PATH.
func TestStartFindsACommandInAnInstallPlace(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs a symlink without .exe")
	}
	home := t.TempDir()
	bin := filepath.Join(home, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testExe, filepath.Join(bin, "fake-installed-server")); err != nil {
		t.Fatal(err)
	}
	emptyPATH := t.TempDir()
	var found []string
	spec := helperSpec("path", "HOME="+home, "PATH="+emptyPATH)
	spec.Command = "fake-installed-server"
	spec.FoundIn = func(dir string) { found = append(found, dir) }
	p := start(t, spec)
	out, err := readAll(t, p.Stdout())
	if want := bin + string(filepath.ListSeparator) + emptyPATH + "\n"; err != nil || string(out) != want {
		t.Errorf("child's PATH: %q (%v), want %q", out, err, want)
	}
	if !slices.Equal(found, []string{bin}) {
		t.Errorf("FoundIn was called with %q, want [%q]", found, bin)
	}
}

// A command found nowhere is an error that says where it was looked for.
func TestStartNotFoundSaysWhereItLooked(t *testing.T) {
	t.Parallel()
	home, path := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "USERPROFILE=" + home, "PATH=" + path}
	_, err := Start(Spec{Key: "alpha", Command: "nope-stdio-test", Env: env})
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Start: %v, want a *NotFoundError that is exec.ErrNotFound", err)
	}
	dirs := installDirs(runtime.GOOS, envGetter(env))
	want := fmt.Sprintf(`stdio: start server "alpha": "nope-stdio-test" is not on PATH (%s) nor in %s`, path, strings.Join(dirs, ", "))
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if !slices.Contains(dirs, filepath.Join(home, ".cargo", "bin")) {
		t.Errorf("the places looked in, %q, lack ~/.cargo/bin", dirs)
	}
}

func TestWithPATHFirst(t *testing.T) {
	t.Parallel()
	sep := string(filepath.ListSeparator)
	for _, tc := range []struct{ env, want []string }{
		{[]string{"A=1", "PATH=/x", "B=2", "PATH=/y"}, []string{"A=1", "B=2", "PATH=/d" + sep + "/y"}},
		{[]string{"A=1"}, []string{"A=1", "PATH=/d"}},
		{[]string{"PATH="}, []string{"PATH=/d"}},
	} {
		if got := withPATHFirst(tc.env, "/d"); !slices.Equal(got, tc.want) {
			t.Errorf("withPATHFirst(%q): %q, want %q", tc.env, got, tc.want)
		}
	}
}
