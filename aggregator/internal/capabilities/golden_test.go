package capabilities

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeGolden reads each set of servers in testdata/merge/*.jsonl, one
// server's initialize (or server/discover) result a line, and writes what
// ParseServer finds in each and what Merge gives for the set;
// testdata/merge.golden is what they give (go test -update rewrites it:
// read its diff).
func TestMergeGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "merge", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no sets of servers in testdata/merge")
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# For each set of servers in testdata/merge/*.jsonl: each server's initialize or\n")
	fmt.Fprintf(&out, "# server/discover result, what ParseServer finds it declares, and what Merge gives\n")
	fmt.Fprintf(&out, "# for the set. go test ./aggregator/internal/capabilities -update rewrites this file.\n\n")
	for _, name := range files {
		if err := goldenSet(&out, name); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, filepath.Join("testdata", "merge.golden"), out.Bytes())
}

// goldenSet writes to out the servers of the set in file name, what each
// declares, and their merge.
func goldenSet(out *bytes.Buffer, name string) error {
	in, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "== %s\n", filepath.Base(name))
	var caps []Server
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		c := ParseServer(sc.Bytes())
		caps = append(caps, c)
		fmt.Fprintf(out, "server %d: %s\n  declares: %s\n", len(caps), sc.Bytes(), declares(c))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	fmt.Fprintf(out, "Merge:    %s\n\n", Merge(nil, caps))
	return nil
}

// declares names what a server declared, of what the aggregator reads.
func declares(c Server) string {
	var d []string
	for _, f := range []struct {
		on   bool
		name string
	}{
		{c.Tools, "tools"}, {c.Prompts, "prompts"}, {c.Resources, "resources"}, {c.Subscribe, "subscribe"},
		{c.Logging, "logging"}, {c.Completions, "completions"}, {c.Apps, "apps"}, {c.tasks != nil, "tasks"}, {c.TasksList, "tasks.list"},
	} {
		if f.on {
			d = append(d, f.name)
		}
	}
	if len(d) == 0 {
		return "(nothing)"
	}
	return strings.Join(d, " ")
}

// update has the golden files in testdata rewritten (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files in testdata with what the tests produce")

// checkGolden fails t when got differs from the file at path; with -update
// it writes got to path.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the code gives (go test -update rewrites it):\n%s", path, got)
	}
}
