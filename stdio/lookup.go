package stdio

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// lookPath resolves command like exec.LookPath, except that when env sets
// PATH the directories of that PATH are searched instead of ours: the child
// is started with that environment, so its configuration may well point PATH
// at where its command lives.
//
// A relative path with a separator ("./server.sh") is taken relative to dir,
// as exec.Cmd runs it, rather than to our working directory.
func lookPath(command string, env []string, dir string) (string, error) {
	if strings.ContainsAny(command, pathSeparators) {
		if dir == "" || filepath.IsAbs(command) {
			return exec.LookPath(command)
		}
		found, err := exec.LookPath(asPath(filepath.Join(dir, command)))
		if err != nil {
			return "", err
		}
		// exec.Cmd runs it relative to dir; keep an extension that
		// LookPath added on Windows.
		if ext := filepath.Ext(found); filepath.Ext(command) != ext {
			command += ext
		}
		return command, nil
	}
	path, ok := envPATH(env)
	if !ok || command == "" {
		return exec.LookPath(command)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "." // as a shell does
		}
		// exec.LookPath of a name with a separator checks that one file
		// (and, on Windows, the PATHEXT extensions).
		file, err := exec.LookPath(asPath(filepath.Join(dir, command)))
		if err != nil {
			continue
		}
		if !filepath.IsAbs(file) {
			// exec.Cmd would run a relative path relative to Dir; like
			// exec.LookPath, refuse a result relative to the current
			// directory.
			return "", &exec.Error{Name: command, Err: exec.ErrDot}
		}
		return file, nil
	}
	return "", &exec.Error{Name: command, Err: exec.ErrNotFound}
}

// asPath makes sure that exec.LookPath takes file for a path, not for a name
// to look up: filepath.Join(".", "x") is "x".
func asPath(file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return "." + string(filepath.Separator) + file
}

// pathSeparators are the characters that make a command a path rather than a
// name to look up.
var pathSeparators = func() string {
	if runtime.GOOS == "windows" {
		return `:\/`
	}
	return "/"
}()

// envPATH returns the value of the last PATH entry in env (the one a child
// sees), and whether there is one. A nil env has none: the child inherits
// our environment, and exec.LookPath searches our PATH.
func envPATH(env []string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		name, value, ok := strings.Cut(env[i], "=")
		if !ok {
			continue
		}
		if name == "PATH" || runtime.GOOS == "windows" && strings.EqualFold(name, "PATH") {
			return value, true
		}
	}
	return "", false
}
