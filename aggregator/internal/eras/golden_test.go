package eras

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestResultsGolden runs every result in testdata/results.jsonl through
// each conversion a result can meet between the eras; testdata/results.golden
// is what they give (go test -update rewrites it: read its diff).
func TestResultsGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		result := sc.Bytes()
		fmt.Fprintf(&out, "result:             %s\n", result)
		fmt.Fprintf(&out, "LegacyResult:       %s\n", LegacyResult(result))
		fmt.Fprintf(&out, "WithResultType:     %s\n", WithResultType(result, false))
		fmt.Fprintf(&out, "WithResultType(ro): %s\n", WithResultType(result, true))
		fmt.Fprintf(&out, "round trip:         %s\n", LegacyResult(WithResultType(result, false)))
		fmt.Fprintf(&out, "IsInputRequired:    %t\n\n", IsInputRequired(result))
	}
	checkGolden(t, "testdata/results.golden", out.Bytes())
}

// TestRequestsGolden adds the _meta of a modern request to the params of
// the requests in testdata/params.jsonl.
func TestRequestsGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/params.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	meta := RequestMeta([]byte(`{"sampling":{},"roots":{"listChanged":true}}`), []byte(`{"name":"client","version":"1.0"}`), "warning")
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		fmt.Fprintf(&out, "params:   %s\nWithMeta: %s\n\n", sc.Bytes(), WithMeta(sc.Bytes(), meta))
	}
	checkGolden(t, "testdata/params.golden", out.Bytes())
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
