package eras

import "testing"

// A related-task tie is found however the key is written (a server must
// not hide a tie from the check by escaping it), and only in _meta.
func TestTiedToTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		tied bool
	}{
		{`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, true},
		{`{"content":[],"_meta":{"a":1,"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, true},
		{`{"_meta":{"io.modelcontextprotocol\/related-task":{"taskId":"t"}}}`, true},
		{`{"_meta":{"io.modelcontextprotocol\u002frelated-task":{"taskId":"t"}}}`, true},
		{`{"\u005fmeta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, true},
		{`{"content":[{"type":"text","text":"io.modelcontextprotocol/related-task"}]}`, false},
		{`{"io.modelcontextprotocol/related-task":{"taskId":"t"}}`, false},
		{`{"_meta":{}}`, false},
		{`{"_meta":"x"}`, false},
		{`{}`, false},
		{``, false},
	} {
		if got := TiedToTask([]byte(tc.msg)); got != tc.tied {
			t.Errorf("%s: tied %v, want %v", tc.msg, got, tc.tied)
		}
	}
}
