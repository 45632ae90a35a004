package stdio

// This file finds a server's command: on PATH, as exec.LookPath does, then
// in the usual install places (installdirs.go).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NotFoundError reports a command found neither on PATH nor in the usual
// install places. errors.Is(err, exec.ErrNotFound) holds for it.
type NotFoundError struct {
	Command string   // the command, a name without a path separator
	PATH    string   // the PATH searched first
	Dirs    []string // the install places searched after it, in order
}

// Error returns, for example,
//
//	"npx" is not on PATH (/usr/bin:/bin) nor in /opt/homebrew/bin, /usr/local/bin, ...
func (e *NotFoundError) Error() string {
	path := e.PATH
	if path == "" {
		path = "empty"
	}
	return fmt.Sprintf("%q is not on PATH (%s) nor in %s", e.Command, path, strings.Join(e.Dirs, ", "))
}

// Unwrap returns exec.ErrNotFound.
func (e *NotFoundError) Unwrap() error { return exec.ErrNotFound }

// findCommand resolves command as lookPath does and, when a name without a
// path separator is not on PATH, looks in the usual install places
// (installDirs). installDir is the place it was found in, "" when on PATH
// or a path was given; a command found nowhere is a *NotFoundError.
func findCommand(command string, env []string, dir string) (path, installDir string, err error) {
	path, err = lookPath(command, env, dir)
	if err == nil || !errors.Is(err, exec.ErrNotFound) || command == "" || strings.ContainsAny(command, pathSeparators) {
		return path, "", err
	}
	getenv := envGetter(env)
	dirs := installDirs(runtime.GOOS, getenv)
	for _, d := range dirs {
		// exec.LookPath of a path checks that one file (and, on Windows,
		// the PATHEXT extensions: npx finds npx.cmd).
		if found, err := exec.LookPath(filepath.Join(d, command)); err == nil {
			return found, d, nil
		}
	}
	return "", "", &NotFoundError{Command: command, PATH: getenv("PATH"), Dirs: dirs}
}

// envGetter returns a getenv over env (the child's environment, last
// entry wins, names case-insensitive on Windows); over ours when env is nil.
func envGetter(env []string) func(string) string {
	if env == nil {
		return os.Getenv
	}
	return func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			k, v, ok := strings.Cut(env[i], "=")
			if ok && (k == name || runtime.GOOS == "windows" && strings.EqualFold(k, name)) {
				return v
			}
		}
		return ""
	}
}

// withPATHFirst returns env (ours when nil) with dir put first in its PATH,
// so that a command found in an install place finds its neighbours there:
// npx in nvm's bin starts with "#!/usr/bin/env node".
func withPATHFirst(env []string, dir string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	name, path := "PATH", ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" || runtime.GOOS == "windows" && strings.EqualFold(k, "PATH") {
			name, path = k, v // the last one counts, as for the child
			continue
		}
		out = append(out, kv)
	}
	if path != "" {
		dir += string(filepath.ListSeparator) + path
	}
	return append(out, name+"="+dir)
}

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
