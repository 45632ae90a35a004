package main

// This file holds what main tells the user beyond the usage text: which
// README section explains an error, and where a server's command was found.

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// readme names a section of README.md, which every distribution carries
// beside the binary, for messages that point to it.
func readme(section string) string { return "README.md#" + section }

// docError ties an error to the README section that explains it; main
// prints a pointer to it on a line of its own after the error.
type docError struct {
	err     error
	section string
}

func (e *docError) Error() string { return e.err.Error() }
func (e *docError) Unwrap() error { return e.err }

// exitMessage is what main writes to stderr for err: the error, then the
// README section that explains it, if there is one.
func exitMessage(err error) string {
	msg := fmt.Sprintf("mcp-simple-aggregator: %v\n", err)
	var doc *docError
	if errors.As(err, &doc) {
		msg += fmt.Sprintf("mcp-simple-aggregator: see %s\n", readme(doc.section))
	}
	return msg
}

// explained ties err, unless nil, to a README section.
func explained(err error, section string) error {
	if err == nil {
		return nil
	}
	return &docError{err, section}
}

// explainStart adds to an error starting a server what to do about a
// command found nowhere.
func explainStart(err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%w: give its full path as \"command\" (see %s)", err, readme("where-commands-are-found"))
	}
	return err
}

// foundLog logs, once per server, a command found outside PATH in one of
// the usual install places (stdio.Spec.FoundIn): a server may be started
// twice (see aggregator's rerun), the line is worth one reading.
type foundLog struct {
	log  *aggregator.Logger
	mu   sync.Mutex      // protects told
	told map[string]bool // server keys logged
}

func newFoundLog(log *aggregator.Logger) *foundLog {
	return &foundLog{log: log, told: make(map[string]bool)}
}

// of returns the stdio.Spec.FoundIn of server s.
func (f *foundLog) of(s config.Server) func(dir string) {
	return func(dir string) {
		f.mu.Lock()
		first := !f.told[s.Key]
		f.told[s.Key] = true
		f.mu.Unlock()
		if first {
			fmt.Fprint(f.log, f.log.Conceal(fmt.Sprintf("mcp-simple-aggregator: server %q: %q is not on PATH; found in %s\n", s.Key, s.Command, dir)))
		}
	}
}
