// Package golden is the golden-file check of the stateless packages'
// tests: what a test produced is compared with a file in its testdata,
// and go test -update rewrites the file instead (read its diff before
// committing it). Only tests import it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata with what the tests produce")

// Check fails t when got differs from the file at path; with -update it
// writes got to path.
func Check(t testing.TB, path string, got []byte) {
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
