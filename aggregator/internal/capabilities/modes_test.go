package capabilities

import "testing"

func TestUndeclared(t *testing.T) {
	for _, tc := range []struct {
		caps, method, params, want string
	}{
		{`{"elicitation":{}}`, "elicitation/create", `{"message":"?","requestedSchema":{}}`, ""},
		{`{"elicitation":{}}`, "elicitation/create", `{"mode":"form","message":"?"}`, ""},
		{`{"elicitation":{}}`, "elicitation/create", `{"mode":"url","url":"https://x","elicitationId":"e"}`, "elicitation.url"},
		{`{"elicitation":{"form":{}}}`, "elicitation/create", `{"mode":"url"}`, "elicitation.url"},
		{`{"elicitation":{"url":{}}}`, "elicitation/create", `{"mode":"url"}`, ""},
		{`{"elicitation":{"url":{}}}`, "elicitation/create", `{"message":"?"}`, "elicitation.form"},
		{`{"elicitation":{"url":{},"form":{}}}`, "elicitation/create", `{"message":"?"}`, ""},
		{`{"elicitation":{"url":null}}`, "elicitation/create", `{"mode":"url"}`, "elicitation.url"},
		{`{}`, "elicitation/create", `{"mode":"url"}`, ""}, // the caller refuses it
		{`{"sampling":{}}`, "sampling/createMessage", `{"messages":[],"maxTokens":1}`, ""},
		{`{"sampling":{}}`, "sampling/createMessage", `{"messages":[],"maxTokens":1,"tools":[{"name":"t"}]}`, "sampling.tools"},
		{`{"sampling":{}}`, "sampling/createMessage", `{"messages":[],"toolChoice":{"mode":"auto"}}`, "sampling.tools"},
		{`{"sampling":{"tools":{}}}`, "sampling/createMessage", `{"messages":[],"tools":[]}`, ""},
		{`{"roots":{}}`, "roots/list", `{}`, ""},
	} {
		if got := Undeclared([]byte(tc.caps), tc.method, []byte(tc.params)); got != tc.want {
			t.Errorf("%s %s %s: got %q, want %q", tc.caps, tc.method, tc.params, got, tc.want)
		}
	}
}
