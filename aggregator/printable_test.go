package aggregator

import (
	"io"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A server's stray stdout line reaches the log quoted: its escape
// sequences, carriage return, bell and a forged line of the aggregator's
// reached the terminal as they were.
func TestAStrayLineIsQuotedInTheWarning(t *testing.T) {
	stray := "\x1b[2J\x1b[H\rmcp-simple-aggregator: error: server \"good\" dropped\x07\x1b]0;pwned\x07"
	h := serveBadAndGood(t, `{}`, answerSession(`{"tools":{}}`, `{"name":"go","inputSchema":{"type":"object"}}`,
		func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			if m.Method == "tools/call" {
				io.WriteString(out, stray+"\n")
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[]}`)))
			}
		}))
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bad:go","arguments":{}}}`)
	log := h.logged()
	if want := `: "\x1b[2J\x1b[H\rmcp-simple-aggregator: error: server \"good\" dropped\a\x1b]0;pwned\a"`; !strings.Contains(log, want) {
		t.Errorf("the warning does not quote the line as %s:\n%s", want, log)
	}
	if strings.ContainsAny(log, "\x1b\r\a") {
		t.Errorf("the log holds a raw control character:\n%q", log)
	}
}

// Whatever a format puts in a line of the aggregator's, no control
// character but the newline reaches the writer raw.
func TestTheLoggerEscapesControlCharacters(t *testing.T) {
	var out syncBuffer
	l := NewLogger(&out, "p: ", true)
	l.Warnf("server %s said %s", "k", "a\rp: error: forged\x1b]0;t\x07\u202eb\nsecond line")
	l.Flush(waitLimit)
	want := "p: warning: server k said a\\rp: error: forged\\x1b]0;t\\a\\u202eb\nsecond line (see README.md#errors-you-may-meet)\n"
	if got := out.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
