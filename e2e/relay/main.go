// Command relay is a bare byte relay: the physical floor of one extra hop.
//
//	relay CMD ARGS...
//
// It starts CMD, copies its own stdin to the child's stdin and the child's
// stdout to its own stdout with plain io.Copy (no parsing), lets the child
// inherit stderr, and exits with the child's status once the child's stdout
// closes. SIGINT and SIGTERM are forwarded to the child.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: relay CMD ARGS...")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()

	go func() {
		_, _ = io.Copy(stdin, os.Stdin)
		_ = stdin.Close() // our stdin EOF becomes the child's
	}()
	_, _ = io.Copy(os.Stdout, stdout)

	err = cmd.Wait()
	signal.Stop(sigs)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
}
