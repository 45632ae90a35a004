package e2e

// What the packaging tests share: the tools they need (npm, the official
// MCPB CLI), one run of .ci/release for the whole test binary, the names
// of its outputs, and checks of the bundle's and the npm packages' contents.

import (
	"bytes"
	"debug/macho"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// testVersion is the VERSION of the shared run of .ci/release.
	testVersion = "v9.9.9-test"
	// bundleName is the Claude Desktop extension .ci/release makes.
	bundleName = "mcp-simple-aggregator.mcpb"
	// packagingDir is the npm project of the official MCPB CLI.
	packagingDir = "packaging"
)

// semverOf is the version of the npm packages and the bundle for a
// release's VERSION, as .ci/release derives it.
func semverOf(version string) string {
	v := strings.TrimPrefix(version, "v")
	if regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		return v
	}
	return "0.0.0-dev-" + strings.NewReplacer(".", "-", "_", "-", "+", "-").Replace(version)
}

// npmPlatform is the platform as npm names it (os-cpu: linux-x64, win32-arm64).
func npmPlatform(goos, goarch string) string {
	npmOS := map[string]string{"windows": "win32"}[goos]
	if npmOS == "" {
		npmOS = goos
	}
	cpu := map[string]string{"amd64": "x64"}[goarch]
	if cpu == "" {
		cpu = goarch
	}
	return npmOS + "-" + cpu
}

// launcherTarball is the file `npm pack` makes of the launcher package.
func launcherTarball(version string) string {
	return "mcp-simple-aggregator-" + semverOf(version) + ".tgz"
}

// platformTarball is the file of the package @mcp-simple-aggregator/OS-CPU.
func platformTarball(version, goos, goarch string) string {
	return "mcp-simple-aggregator-" + npmPlatform(goos, goarch) + "-" + semverOf(version) + ".tgz"
}

// requireNPM returns the path of npm, which .ci/release packs with.
func requireNPM(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipUnlessCI(t, "npm is not installed: %v", err)
	}
	return npm
}

// requireMCPB returns the path of the official MCPB CLI, installing it
// with `npm ci` in e2e/packaging when it is not there yet.
func requireMCPB(t *testing.T) string {
	t.Helper()
	cli, err := filepath.Abs(filepath.Join(packagingDir, "node_modules", ".bin", "mcpb"))
	if err != nil {
		t.Fatal(err)
	}
	npmInstall(t, packagingDir, func() []string {
		if _, err := os.Stat(cli); err != nil {
			return []string{"the mcpb CLI"}
		}
		return nil
	})
	return cli
}

// sharedRelease is the one run of .ci/release with VERSION=testVersion
// that TestReleaseScript and the packaging tests look at.
var sharedRelease struct {
	once        sync.Once
	dir, stdout string
	took        time.Duration
	err         error
}

// releaseOutput runs .ci/release with VERSION=testVersion, once for the
// test binary, and returns its OUTDIR and what it printed.
func releaseOutput(t *testing.T) (dir, stdout string) {
	t.Helper()
	requireNPM(t)
	r := &sharedRelease
	r.once.Do(func() {
		// Under TestMain's directory, removed when the tests end.
		if r.dir, r.err = os.MkdirTemp(filepath.Dir(aggregatorBin), "release-"); r.err != nil {
			return
		}
		env := append(environWithout("VERSION"), "VERSION="+testVersion)
		r.stdout, r.took, r.err = runReleaseScript(r.dir, env)
		t.Logf(".ci/release took %v", r.took.Round(time.Millisecond))
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.dir, r.stdout
}

// checkBundleArchive checks the .mcpb file: its entries, their modes, the
// manifest's version and every binary in it.
func checkBundleArchive(t *testing.T, path, version string) {
	t.Helper()
	files := readArchive(t, path)
	var names []string
	for name, f := range files {
		names = append(names, name)
		if exec := strings.HasPrefix(name, "server/"); exec != (f.mode&0o111 != 0) {
			t.Errorf("%s: %s has mode %v", bundleName, name, f.mode)
		}
	}
	wantNames := []string{"README.md", "manifest.json", "server/darwin/mcp-simple-aggregator",
		"server/linux/mcp-simple-aggregator", "server/win32/mcp-simple-aggregator.exe"}
	if slices.Sort(names); !slices.Equal(names, wantNames) {
		t.Fatalf("%s holds %q, want %q", bundleName, names, wantNames)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(files["manifest.json"].data, &m); err != nil || m.Version != semverOf(version) {
		t.Errorf("%s: manifest version %q (%v), want %q", bundleName, m.Version, err, semverOf(version))
	}
	fat, err := macho.NewFatFile(bytes.NewReader(files["server/darwin/mcp-simple-aggregator"].data))
	if err != nil {
		t.Fatalf("%s: the darwin binary is not a universal binary: %v", bundleName, err)
	}
	var cpus []string
	for _, a := range fat.Arches {
		cpus = append(cpus, a.Cpu.String())
		data := files["server/darwin/mcp-simple-aggregator"].data[a.Offset : a.Offset+a.Size]
		goarch := map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[a.Cpu]
		checkBinary(t, bundleName+" darwin/"+goarch, "darwin", goarch, data)
	}
	if want := []string{"CpuAmd64", "CpuArm64"}; !slices.Equal(cpus, want) {
		t.Errorf("%s: the darwin binary holds %q, want %q", bundleName, cpus, want)
	}
	checkBinary(t, bundleName+" linux", "linux", "amd64", files["server/linux/mcp-simple-aggregator"].data)
	checkBinary(t, bundleName+" win32", "windows", "amd64", files["server/win32/mcp-simple-aggregator.exe"].data)
}

// npmPackage is the part of a package.json the checks look at.
type npmPackage struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Bin                  map[string]string `json:"bin"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// checkNPMTarballs checks the npm packages in dir: the launcher names every
// platform package at its own version, and each platform package holds its
// binary, executable, with the os and cpu npm picks it by.
func checkNPMTarballs(t *testing.T, dir, version string) {
	t.Helper()
	semver := semverOf(version)
	files := readArchive(t, filepath.Join(dir, launcherTarball(version)))
	pkg := readPackageJSON(t, launcherTarball(version), files)
	wantBin := map[string]string{"mcp-simple-aggregator": "bin/mcp-simple-aggregator.js"}
	if pkg.Name != "mcp-simple-aggregator" || pkg.Version != semver || fmt.Sprint(pkg.Bin) != fmt.Sprint(wantBin) {
		t.Errorf("launcher package.json: name %q, version %q, bin %v", pkg.Name, pkg.Version, pkg.Bin)
	}
	if f, ok := files["package/bin/mcp-simple-aggregator.js"]; !ok || f.mode&0o111 == 0 {
		t.Errorf("the launcher's bin/mcp-simple-aggregator.js is missing or not executable")
	}
	wantDeps := map[string]string{}
	for _, tg := range releaseTargets {
		wantDeps["@mcp-simple-aggregator/"+npmPlatform(tg.goos, tg.goarch)] = semver
	}
	if fmt.Sprint(pkg.OptionalDependencies) != fmt.Sprint(wantDeps) {
		t.Errorf("launcher optionalDependencies %v, want %v", pkg.OptionalDependencies, wantDeps)
	}
	for _, tg := range releaseTargets {
		name := platformTarball(version, tg.goos, tg.goarch)
		files := readArchive(t, filepath.Join(dir, name))
		pkg := readPackageJSON(t, name, files)
		npmOS, cpu, _ := strings.Cut(npmPlatform(tg.goos, tg.goarch), "-")
		if pkg.Name != "@mcp-simple-aggregator/"+npmOS+"-"+cpu || pkg.Version != semver || !slices.Equal(pkg.OS, []string{npmOS}) || !slices.Equal(pkg.CPU, []string{cpu}) || pkg.Bin != nil {
			t.Errorf("%s: package.json name %q, version %q, os %q, cpu %q, bin %v", name, pkg.Name, pkg.Version, pkg.OS, pkg.CPU, pkg.Bin)
		}
		bin := "package/bin/mcp-simple-aggregator"
		if tg.goos == "windows" {
			bin += ".exe"
		}
		f, ok := files[bin]
		if !ok || f.mode&0o111 == 0 {
			t.Errorf("%s: %s is missing or not executable", name, bin)
			continue
		}
		checkBinary(t, name, tg.goos, tg.goarch, f.data)
	}
}

// readPackageJSON decodes package/package.json of an npm tarball.
func readPackageJSON(t *testing.T, tarball string, files map[string]archived) npmPackage {
	t.Helper()
	var pkg npmPackage
	if err := json.Unmarshal(files["package/package.json"].data, &pkg); err != nil {
		t.Fatalf("%s: package/package.json: %v", tarball, err)
	}
	return pkg
}
