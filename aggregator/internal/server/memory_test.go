package server

import (
	"bytes"
	"testing"
)

// A record keeps what a server declared and its lists raw, and reads back
// as it was kept; a file of an older version (declarations alone) or not
// a record at all is not recalled: that server is not known.
func TestRecordsReadBackAsKept(t *testing.T) {
	tools := [][]byte{[]byte(`{"name":"a","description":"<&> as written","inputSchema":{"type":"object"}}`)}
	resources := [][]byte{[]byte(`{"uri":"k://r","name":"r"}`)}
	l := Lists{
		Tools:        namedEntries(tools, func(int) {}),
		Prompts:      namedEntries([][]byte{[]byte(`{"name":"p"}`)}, func(int) {}),
		Resources:    resourceIndex(resources),
		ResourceList: resources,
		Templates:    templates([][]byte{[]byte(`{"uriTemplate":"k://{x}","name":"t"}`)}),
	}
	declared := []byte(`{"tools":{},"prompts":{},"resources":{},"extensions":{"io.modelcontextprotocol/ui":{}}}`)
	b := record(declared, "Ask k.", l)
	r, ok := readRecord(b)
	if !ok || r.Failed {
		t.Fatalf("record %s reads back as %+v, %t", b, r, ok)
	}
	if !bytes.Equal(r.declared, declared) || r.Instructions != "Ask k." || !r.Caps.Apps || !r.Caps.Prompts {
		t.Errorf("what it declared reads back as %s, %q, %+v", r.declared, r.Instructions, r.Caps)
	}
	if !bytes.Equal(record(r.declared, r.Instructions, r.Lists), b) {
		t.Errorf("a record read back and kept again differs:\n%s\n%s", record(r.declared, r.Instructions, r.Lists), b)
	}
	if len(r.Lists.Tools) != 1 || !bytes.Equal(r.Lists.Tools[0].Raw, tools[0]) || r.Lists.Tools[0].Name != "a" {
		t.Errorf("tools read back as %+v", r.Lists.Tools)
	}
	if _, ok := r.Lists.Resources["k://r"]; !ok || len(r.Lists.Templates) != 1 || !r.Lists.Templates[0].Matches("k://1") {
		t.Errorf("resources read back as %+v, templates %+v", r.Lists.Resources, r.Lists.Templates)
	}
	if f, ok := readRecord(failedRecord); !ok || !f.Failed {
		t.Errorf("a failed start reads back as %+v, %t", f, ok)
	}
	for _, old := range []string{`{"capabilities":{"tools":{}},"instructions":"Ask k."}`, `{"capabilities":[],"tools":[],"prompts":[],"resources":[],"resourceTemplates":[]}`, `[]`} {
		if r, ok := readRecord([]byte(old)); ok {
			t.Errorf("%s is recalled as %+v", old, r)
		}
	}
}
