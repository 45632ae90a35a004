package e2e

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// releaseLimit bounds one run of .ci/release, a deadlock watchdog: its six
// cross-builds take about 70 s from a cold build cache on two cores, 4 s
// warm, and packing the bundle and the seven npm packages some 10 s more.
const releaseLimit = 5 * time.Minute

// releaseTargets are the platforms .ci/release builds, in its order.
var releaseTargets = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func TestReleaseScript(t *testing.T) {
	t.Run("VERSION", func(t *testing.T) {
		dir, stdout := releaseOutput(t)
		checkRelease(t, dir, stdout, testVersion)
	})
	t.Run("git describe", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		requireNPM(t)
		// Others may edit the tree meanwhile: -dirty may come or go.
		before := gitDescribe(t)
		dir, stdout := runRelease(t, environWithout("VERSION"))
		after := gitDescribe(t)
		first, _, _ := strings.Cut(stdout, "\n")
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(first), "mcp-simple-aggregator_"), "_linux_amd64.tar.gz")
		if version != before && version != after {
			t.Fatalf("first archive %q: version %q, want git describe's %q", first, version, before)
		}
		checkRelease(t, dir, stdout, version)
	})
}

// gitDescribe is the version .ci/release derives from the checkout.
func gitDescribe(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		return "dev" // not a git checkout
	}
	return strings.TrimSpace(string(out))
}

// runRelease runs .ci/release into a new directory with env as its whole
// environment, and returns the directory and what the script printed.
func runRelease(t *testing.T, env []string) (dir, stdout string) {
	t.Helper()
	dir = t.TempDir()
	stdout, took, err := runReleaseScript(dir, env)
	t.Logf(".ci/release took %v", took.Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return dir, stdout
}

// runReleaseScript runs .ci/release into dir with env as its whole
// environment, and returns what it printed and how long it took.
func runReleaseScript(dir string, env []string) (stdout string, took time.Duration, err error) {
	script, err := filepath.Abs(filepath.Join("..", ".ci", "release"))
	if err != nil {
		return "", 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, dir)
	cmd.Env = env
	cmd.WaitDelay = waitLimit // go build's children may hold the pipes
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		return "", took, fmt.Errorf(".ci/release did not finish within %v; stderr:\n%s", releaseLimit, errOut.String())
	}
	if err != nil {
		return "", took, fmt.Errorf(".ci/release: %w; stderr:\n%s", err, errOut.String())
	}
	return out.String(), took, nil
}

// archiveName is the archive .ci/release makes for a target: windows gets
// a zip where zip is installed.
func archiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if _, err := exec.LookPath("zip"); err == nil && goos == "windows" {
		ext = ".zip"
	}
	return "mcp-simple-aggregator_" + version + "_" + goos + "_" + goarch + ext
}

// checkRelease checks the output of .ci/release in dir: the archives, the
// bundle and the npm packages, their sums, their contents and the binaries
// in them.
func checkRelease(t *testing.T, dir, stdout, version string) {
	t.Helper()
	var want, printed []string
	for _, tg := range releaseTargets {
		want = append(want, archiveName(version, tg.goos, tg.goarch))
	}
	want = append(want, bundleName, launcherTarball(version))
	for _, tg := range releaseTargets {
		want = append(want, platformTarball(version, tg.goos, tg.goarch))
	}
	for _, name := range want {
		printed = append(printed, filepath.Join(dir, name))
	}
	printed = append(printed, filepath.Join(dir, "SHA256SUMS"))
	if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); !slices.Equal(got, printed) {
		t.Errorf("the script printed\n%s\nwant\n%s", stdout, strings.Join(printed, "\n"))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if wantAll := slices.Sorted(slices.Values(append([]string{"SHA256SUMS"}, want...))); !slices.Equal(got, wantAll) {
		t.Fatalf("OUTDIR holds %q, want %q", got, wantAll)
	}
	checkSums(t, dir, want)
	checkBundleArchive(t, filepath.Join(dir, bundleName), version)
	checkNPMTarballs(t, dir, version)
	for i, tg := range releaseTargets {
		base := strings.TrimSuffix(strings.TrimSuffix(want[i], ".tar.gz"), ".zip")
		bin := base + "/mcp-simple-aggregator"
		if tg.goos == "windows" {
			bin += ".exe"
		}
		files := readArchive(t, filepath.Join(dir, want[i]))
		for _, name := range []string{base + "/", bin, base + "/README.md"} {
			if _, ok := files[name]; !ok {
				t.Errorf("%s lacks %s", want[i], name)
			}
		}
		for name := range files {
			if !strings.HasPrefix(name, base+"/") {
				t.Errorf("%s holds %s, outside %s/", want[i], name, base)
			}
		}
		exe, ok := files[bin]
		if !ok {
			continue
		}
		if exe.mode&0o111 == 0 {
			t.Errorf("%s: %s has mode %v, not executable", want[i], bin, exe.mode)
		}
		checkBinary(t, want[i], tg.goos, tg.goarch, exe.data)
		if tg.goos == runtime.GOOS && tg.goarch == runtime.GOARCH {
			checkVersion(t, tg.goos, exe.data, version)
		}
	}
}

// checkSums checks that dir/SHA256SUMS has one right line per archive.
func checkSums(t *testing.T, dir string, archives []string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) != len(archives) {
		t.Errorf("SHA256SUMS has %d lines, want %d:\n%s", len(lines), len(archives), text)
	}
	var named []string
	for _, line := range lines {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Errorf("SHA256SUMS line %q is not HASH  NAME", line)
			continue
		}
		named = append(named, name)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("SHA256SUMS names %q: %v", name, err)
			continue
		}
		if h := sha256.Sum256(data); sum != hex.EncodeToString(h[:]) {
			t.Errorf("SHA256SUMS gives %s for %s, its hash is %x", sum, name, h)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(named)), slices.Sorted(slices.Values(archives))) {
		t.Errorf("SHA256SUMS names %q, want %q", named, archives)
	}
}

// archived is one entry of an archive.
type archived struct {
	mode os.FileMode
	data []byte
}

// readArchive returns the entries of a .tar.gz (.tgz) or .zip (.mcpb) by
// name; directories end in "/".
func readArchive(t *testing.T, path string) map[string]archived {
	t.Helper()
	files := make(map[string]archived)
	add := func(name string, mode os.FileMode, r io.Reader) {
		if _, dup := files[name]; dup {
			t.Errorf("%s holds %s twice", path, name)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		files[name] = archived{mode, data}
	}
	if strings.HasSuffix(path, ".zip") || strings.HasSuffix(path, ".mcpb") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			add(f.Name, f.Mode(), rc)
			rc.Close()
		}
		return files
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		add(h.Name, h.FileInfo().Mode(), tr)
	}
}

// checkBinary checks that a binary is an executable for goos/goarch, and
// that a linux one is static: no interpreter, no shared libraries.
func checkBinary(t *testing.T, archive, goos, goarch string, data []byte) {
	t.Helper()
	r := bytes.NewReader(data)
	var machine string
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			t.Errorf("%s: binary is not ELF: %v", archive, err)
			return
		}
		machine = f.Machine.String()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s: binary has an interpreter (PT_INTERP), not static", archive)
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("%s: binary needs shared libraries %q (%v), not static", archive, libs, err)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			t.Errorf("%s: binary is not Mach-O: %v", archive, err)
			return
		}
		machine = f.Cpu.String()
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			t.Errorf("%s: binary is not PE: %v", archive, err)
			return
		}
		machine = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	wantMachine := map[string]map[string]string{
		"linux":   {"amd64": "EM_X86_64", "arm64": "EM_AARCH64"},
		"darwin":  {"amd64": "CpuAmd64", "arm64": "CpuArm64"},
		"windows": {"amd64": "amd64", "arm64": "arm64"},
	}[goos][goarch]
	if machine != wantMachine {
		t.Errorf("%s: binary is for machine %q, want %q", archive, machine, wantMachine)
	}
}

// checkVersion runs a binary built for this machine with --version.
func checkVersion(t *testing.T, goos string, data []byte, version string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp-simple-aggregator")
	if goos == "windows" {
		path += ".exe"
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", path, err)
	}
	if want := "mcp-simple-aggregator " + version + "\n"; string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
}
