package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test binary plays both parts: the relay (TESTRELAY_ROLE=relay) and a
// child that copies stdin to stdout and exits 7 (first argument "relay-child").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "relay-child" {
		io.Copy(os.Stdout, os.Stdin)
		os.Stderr.WriteString("child done\n")
		os.Exit(7)
	}
	if os.Getenv("TESTRELAY_ROLE") == "relay" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func TestRelayCopiesBytesAndExitStatus(t *testing.T) {
	cmd := exec.Command(os.Args[0], os.Args[0], "relay-child")
	cmd.Env = append(os.Environ(), "TESTRELAY_ROLE=relay", "GORACE=atexit_sleep_ms=0")
	in := "not json at all\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + strings.Repeat("z", 3<<20) + "\nno final newline"
	cmd.Stdin = strings.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("relay exit: %v, want status 7; stderr %q", err, errOut.String())
	}
	if out.String() != in {
		t.Errorf("relayed %d bytes, want the %d bytes sent", out.Len(), len(in))
	}
	if errOut.String() != "child done\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestRelayUsage(t *testing.T) {
	if code := run(nil); code != 2 {
		t.Errorf("no command: status %d", code)
	}
}
