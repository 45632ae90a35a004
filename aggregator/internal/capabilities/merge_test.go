package capabilities

import (
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

func TestChildCapabilitiesMerged(t *testing.T) {
	children := []string{
		`{"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/ui":{"v":1}},"experimental":{"a":{"from":"one"}},"future":{"x":1},"tasks":{"list":{}}}}`,
		`{"capabilities":{"prompts":{},"logging":{},"extensions":{"io.modelcontextprotocol/ui":{"v":2},"other/ext":{}},"experimental":{"a":{"from":"two"},"b":true},"future":2,"later":null,"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}}`,
		`{"capabilities":{"resources":{"subscribe":true},"completions":{},"tasks":{"requests":{"tools":{"call":{}},"prompts":{"get":{}}}}}}`,
	}
	var caps []Server
	for _, c := range children {
		caps = append(caps, ParseServer([]byte(c)))
	}
	if !caps[0].Apps || !caps[1].Apps || caps[2].Apps {
		t.Errorf("apps: %v %v %v", caps[0].Apps, caps[1].Apps, caps[2].Apps)
	}
	if !caps[0].TasksList || caps[1].TasksList || caps[2].TasksList {
		t.Errorf("tasks.list: %v %v %v", caps[0].TasksList, caps[1].TasksList, caps[2].TasksList)
	}
	got := string(Merge(nil, caps))
	want := `{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"logging":{},"completions":{},` +
		`"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}},"prompts":{"get":{}}}},` +
		`"experimental":{"a":{"from":"one"},"b":true},"extensions":{"io.modelcontextprotocol/ui":{"v":1},"other/ext":{}},"future":{"x":1},"later":null}`
	if got != want {
		t.Errorf("merged:\n got %s\nwant %s", got, want)
	}
}

// parsed are the capabilities of servers whose initialize results are
// results.
func parsed(results ...string) []Server {
	var caps []Server
	for _, r := range results {
		caps = append(caps, ParseServer([]byte(r)))
	}
	return caps
}

// TestMerge: what the aggregator declares for sets of servers.
func TestMerge(t *testing.T) {
	const tools = `{"tools":{"listChanged":true}`
	for _, tc := range []struct {
		name string
		caps []Server
		want string
	}{
		{"none", nil, tools + `}`},
		{"nothing declared", parsed(`{"capabilities":{}}`, `{}`), tools + `}`},
		{"tools", parsed(`{"capabilities":{"tools":{"listChanged":false}}}`), tools + `}`},
		// The aggregator's lists change whatever its servers' do.
		{"lists", parsed(`{"capabilities":{"prompts":{"listChanged":false}}}`, `{"capabilities":{"resources":{}}}`),
			tools + `,"prompts":{"listChanged":true},"resources":{"listChanged":true}}`},
		{"subscribe", parsed(`{"capabilities":{"resources":{}}}`, `{"capabilities":{"resources":{"subscribe":true}}}`),
			tools + `,"resources":{"listChanged":true,"subscribe":true}}`},
		{"subscribe not a boolean", parsed(`{"capabilities":{"resources":{"subscribe":"true"}}}`),
			tools + `,"resources":{"listChanged":true}}`},
		{"logging and completions", parsed(`{"capabilities":{"logging":{}}}`, `{"capabilities":{"completions":{}}}`),
			tools + `,"logging":{},"completions":{}}`},
		{"null and false", parsed(`{"capabilities":{"prompts":null,"resources":false,"logging":null,"completions":false,"tasks":null}}`),
			tools + `}`},
		// What pendingOffers declares for servers still starting.
		{"pending", []Server{{Tools: true, Prompts: true, Resources: true}},
			tools + `,"prompts":{"listChanged":true},"resources":{"listChanged":true}}`},
		{"one with extensions", parsed(`{"capabilities":{"tools":{}}}`, `{"capabilities":{"extensions":{ "io.modelcontextprotocol/ui" : { } }}}`),
			tools + `,"extensions":{"io.modelcontextprotocol/ui":{ }}}`},
		{"extensions of several", parsed(`{"capabilities":{"extensions":{"a/x":{"v":1}}}}`, `{"capabilities":{"extensions":{"b/y":[],"a/x":{"v":2}}}}`),
			tools + `,"extensions":{"a/x":{"v":1},"b/y":[]}}`},
		{"one with experimental", parsed(`{"capabilities":{"experimental":{"x":{ "on" : true }}}}`, `{"capabilities":{"tools":{}}}`),
			tools + `,"experimental":{"x":{ "on" : true }}}`},
		{"tasks", parsed(`{"capabilities":{"tasks":{"list":{},"requests":{"tools":{"call":{}}}}}}`, `{"capabilities":{"tasks":{"cancel":{},"requests":{"sampling":{"createMessage":{}}}}}}`),
			tools + `,"tasks":{"list":{},"requests":{"tools":{"call":{}},"sampling":{"createMessage":{}}},"cancel":{}}}`},
		{"unknown keys", parsed(`{"capabilities":{"future":{ "x" : 1 }}}`, `{"capabilities":{"future":2,"later":null}}`),
			tools + `,"future":{ "x" : 1 },"later":null}`},
		{"in order", parsed(`{"capabilities":{"future":1,"extensions":{"e":{}},"experimental":{"x":{}},"tasks":{"list":{}},"completions":{},"logging":{},"resources":{"subscribe":true},"prompts":{},"tools":{}}}`),
			tools + `,"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"logging":{},"completions":{},"tasks":{"list":{}},"experimental":{"x":{}},"extensions":{"e":{}},"future":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Merge(nil, tc.caps)); got != tc.want {
				t.Errorf("Merge\n got %s\nwant %s", got, tc.want)
			}
			if got := string(Merge([]byte(`"capabilities":`), tc.caps)); got != `"capabilities":`+tc.want {
				t.Errorf("Merge appending to b gives %s", got)
			}
		})
	}
}

// TestMergeKeepsItsInput: merging does not change the servers' members,
// so that the same servers merged again give the same.
func TestMergeKeepsItsInput(t *testing.T) {
	caps := parsed(
		`{"capabilities":{"tasks":{"requests":{"tools":{"call":{}}}},"extensions":{"a":1},"experimental":{"x":1},"future":1}}`,
		`{"capabilities":{"tasks":{"requests":{"prompts":{"get":{}}}},"extensions":{"b":2},"experimental":{"y":2},"later":2}}`,
	)
	before := describe(caps[0]) + "\n" + describe(caps[1])
	first := string(Merge(nil, caps))
	if again := string(Merge(nil, caps)); again != first {
		t.Errorf("merged again: %s, first %s", again, first)
	}
	if after := describe(caps[0]) + "\n" + describe(caps[1]); after != before {
		t.Errorf("the servers' capabilities changed:\n%s\nwere\n%s", after, before)
	}
}

// TestMergeObjects: the deep union of objects, the first value where they
// are not all objects.
func TestMergeObjects(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []string
		want string
	}{
		{"none", nil, `{}`},
		{"one, its members kept", []string{`{ "a" : { "b" : 1 } }`}, `{"a":{ "b" : 1 }}`},
		{"apart", []string{`{"a":1}`, `{"b":2}`}, `{"a":1,"b":2}`},
		{"first value", []string{`{"a":1}`, `{"a":2}`}, `{"a":1}`},
		{"objects merged", []string{`{"a":{"x":1}}`, `{"a":{"y":2}}`}, `{"a":{"x":1,"y":2}}`},
		{"object and not", []string{`{"a":{"x":1}}`, `{"a":true}`, `{"a":{"y":2}}`}, `{"a":{"x":1}}`},
		{"not and object", []string{`{"a":null}`, `{"a":{"y":2}}`}, `{"a":null}`},
		{"deep", []string{`{"r":{"t":{"c":{}}}}`, `{"r":{"t":{"l":{}},"p":{}}}`, `{"r":{"s":{}}}`}, `{"r":{"t":{"c":{},"l":{}},"p":{},"s":{}}}`},
		{"not objects skipped", []string{`null`, `{"a":1}`, `[1]`}, `{"a":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs [][]byte
			for _, o := range tc.objs {
				objs = append(objs, []byte(o))
			}
			if got := string(mergeObjects(objs)); got != tc.want {
				t.Errorf("mergeObjects(%q) = %s, want %s", tc.objs, got, tc.want)
			}
		})
	}
}

func TestUnion(t *testing.T) {
	m := func(k, v string) jsonrpc.RawMember { return jsonrpc.RawMember{Key: k, Value: []byte(v)} }
	got := union([]jsonrpc.RawMember{m("a", "1")}, []jsonrpc.RawMember{m("b", "2"), m("a", "3"), m("b", "4"), m("c", "5")})
	if s := string(appendObject(nil, got)); s != `{"a":1,"b":2,"c":5}` {
		t.Errorf("union = %s", s)
	}
	if s := string(appendObject(nil, union(nil, nil))); s != `{}` {
		t.Errorf("union of none = %s", s)
	}
}

func TestAppendObject(t *testing.T) {
	ms := []jsonrpc.RawMember{{Key: `a"b`, Value: []byte(`{ }`)}, {Key: "é", Value: []byte(`[1, 2]`)}}
	if got := string(appendObject([]byte(`x=`), ms)); got != `x={"a\"b":{ },"é":[1, 2]}` {
		t.Errorf("appendObject = %s", got)
	}
}
