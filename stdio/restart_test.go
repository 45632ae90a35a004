package stdio

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

func init() {
	// oneline answers one line of stdin with "first LINE" and exits, as a
	// server of the older era exits on the newer era's probe.
	helpers["oneline"] = func() {
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Print("first " + line)
	}
}

// TestRestartableRunsAgainWhileArmed: a process that ends while a restart
// is armed is started again, and its reader and writer go on with the new
// run as if nothing happened; once disarmed, its end is the end.
func TestRestartableRunsAgainWhileArmed(t *testing.T) {
	t.Parallel()
	first := start(t, helperSpec("oneline"))
	r := NewRestartable(first, func() (Started, error) { return Start(helperSpec("echo")) })
	restarted := make(chan struct{})
	r.Arm(func() { close(restarted) })
	out := bufio.NewReader(r.Stdout())
	exchange := func(send, want string) {
		t.Helper()
		if _, err := io.WriteString(r.Stdin(), send+"\n"); err != nil {
			t.Fatalf("writing %q: %v", send, err)
		}
		if got, err := out.ReadString('\n'); err != nil || got != want+"\n" {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	exchange("probe", "first probe")
	<-restarted
	exchange("hello", "hello")
	r.Disarm()
	r.Stdin().Close()
	<-r.Done()
	if got, err := out.ReadString('\n'); err != io.EOF || got != "" {
		t.Errorf("after the end: read %q, %v; want EOF", got, err)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), `"echo"`) {
		t.Errorf("Err = %v, want how the last run (echo) ended", err)
	}
}

// TestRestartableEndsWhenNotArmed: without Arm, the end of the process is
// the end: no second run.
func TestRestartableEndsWhenNotArmed(t *testing.T) {
	t.Parallel()
	first := start(t, helperSpec("oneline"))
	r := NewRestartable(first, func() (Started, error) {
		t.Error("started again without being armed")
		return Start(helperSpec("echo"))
	})
	io.WriteString(r.Stdin(), "x\n")
	if b, err := io.ReadAll(r.Stdout()); err != nil || string(b) != "first x\n" {
		t.Errorf("read %q, %v; want the one run's output", b, err)
	}
	<-r.Done()
	r.Stop()
}
