package stdio

// This file knows where installers put commands that a minimal PATH lacks.
// Claude Desktop on macOS starts servers with PATH=/usr/bin:/bin:/usr/sbin:/sbin,
// without Homebrew, nvm, volta, asdf or ~/.local/bin, so "command": "npx"
// is "not found" for most users; lookPath searches these directories after
// PATH.

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// installDirs returns the directories searched, in order, for a command
// that is not on PATH, on goos. getenv reads the environment (HOME, NVM_DIR,
// ...); directories that do not exist are listed too, so that an error can
// say where the command was looked for.
func installDirs(goos string, getenv func(string) string) []string {
	if goos == "windows" {
		return windowsInstallDirs(getenv)
	}
	home := getenv("HOME")
	// under is $envVar/sub..., or ~/def/sub... when envVar is unset.
	under := func(envVar, def string, sub ...string) string {
		base := ""
		if envVar != "" {
			base = getenv(envVar)
		}
		if base == "" {
			if home == "" {
				return ""
			}
			base = filepath.Join(home, def)
		}
		return filepath.Join(append([]string{base}, sub...)...)
	}
	dirs := []string{
		"/opt/homebrew/bin", // Homebrew on Apple silicon
		"/usr/local/bin",    // Homebrew on Intel Macs, and many installers
	}
	if goos == "linux" {
		dirs = append(dirs, "/home/linuxbrew/.linuxbrew/bin")
	}
	nvmDir := under("NVM_DIR", ".nvm")
	if nvmDir != "" {
		dirs = append(dirs, nvmNodeBin(nvmDir))
	}
	dirs = append(dirs,
		under("VOLTA_HOME", ".volta", "bin"),
		under("ASDF_DATA_DIR", ".asdf", "shims"),
		under("", filepath.Join(".local", "bin")),
		under("BUN_INSTALL", ".bun", "bin"),
		under("CARGO_HOME", ".cargo", "bin"),
	)
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// windowsInstallDirs are the usual places on Windows: Node.js's installer,
// npm's global prefix (npx.cmd and the shims of global packages),
// nvm-windows, volta, scoop, and the per-user tool directories.
func windowsInstallDirs(getenv func(string) string) []string {
	join := func(envVar string, sub ...string) string {
		base := getenv(envVar)
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, sub...)...)
	}
	home := getenv("USERPROFILE")
	scoop := join("SCOOP", "shims")
	if scoop == "" && home != "" {
		scoop = filepath.Join(home, "scoop", "shims")
	}
	dirs := []string{
		join("ProgramFiles", "nodejs"),
		join("APPDATA", "npm"),
		join("NVM_SYMLINK"),
		join("LOCALAPPDATA", "Volta", "bin"),
		scoop,
	}
	if home != "" {
		for _, sub := range [][]string{{".local", "bin"}, {".bun", "bin"}, {".cargo", "bin"}} {
			dirs = append(dirs, filepath.Join(append([]string{home}, sub...)...))
		}
	}
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// nvmNodeBin returns the bin directory of the node version nvm would use in
// a new shell: the one its "default" alias names (an exact version, a
// prefix such as "20" or "v20.11", or another alias such as "lts/iron"),
// else the newest installed. Without any installed version it returns the
// pattern VERSIONS/*/bin, for the error that lists where it looked.
func nvmNodeBin(nvmDir string) string {
	versions := filepath.Join(nvmDir, "versions", "node")
	entries, _ := os.ReadDir(versions)
	var installed []string
	for _, e := range entries {
		if e.IsDir() && nodeVersion(e.Name()) != nil {
			installed = append(installed, e.Name())
		}
	}
	if len(installed) == 0 {
		return filepath.Join(versions, "*", "bin")
	}
	slices.SortFunc(installed, func(a, b string) int { return slices.Compare(nodeVersion(a), nodeVersion(b)) })
	chosen := installed[len(installed)-1]
	if want := nvmAlias(nvmDir, "default"); want != "" {
		for _, v := range slices.Backward(installed) {
			if v == want || strings.HasPrefix(v, want+".") {
				chosen = v
				break
			}
		}
	}
	return filepath.Join(versions, chosen, "bin")
}

// nvmAlias resolves an nvm alias to a version or version prefix with a
// leading "v" ("v20.11.0", "v20"), following aliases that name aliases
// (default -> lts/iron -> v20.19.0); "" for node, stable, an unknown name,
// or no alias at all (the newest version is then taken).
func nvmAlias(nvmDir, name string) string {
	for range 5 { // aliases may name aliases; a loop must end
		data, err := os.ReadFile(filepath.Join(nvmDir, "alias", filepath.FromSlash(name)))
		if err != nil {
			break
		}
		name = strings.TrimSpace(string(data))
	}
	v := "v" + strings.TrimPrefix(name, "v")
	padded := v
	for strings.Count(padded, ".") < 2 {
		padded += ".0"
	}
	if nodeVersion(padded) == nil {
		return ""
	}
	return v
}

// nodeVersion parses "v20.11.0" (or a prefix of it padded with ".0") into
// its numbers; nil if name is not such a version.
func nodeVersion(name string) []int {
	rest, ok := strings.CutPrefix(name, "v")
	parts := strings.Split(rest, ".")
	if !ok || len(parts) != 3 {
		return nil
	}
	nums := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p != strconv.Itoa(n) {
			return nil
		}
		nums[i] = n
	}
	return nums
}
