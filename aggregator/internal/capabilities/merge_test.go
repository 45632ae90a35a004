package capabilities

import "testing"

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
