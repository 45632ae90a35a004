package aggregator

import (
	"errors"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// What a server wrote on its stderr, and the values of its config entry's
// env and variables, are kept from the model: stderr goes to the log only
// (as a client that runs the server directly shows it in its log), and the
// aggregator's own log lines show names in place of those values
// (Logger.Hide).

// toldClient is err as the client (and so the model) is told it: what
// happened, without the lines the server last wrote on its stderr (a
// rejected token, a database URL with its password), which the log has.
// errors.Is and errors.As see err.
func toldClient(err error) error {
	var ee *stdio.ExitError
	if err == nil || !errors.As(err, &ee) || len(ee.StderrTail) == 0 {
		return err
	}
	brief := *ee
	brief.StderrTail = nil
	return &toldError{msg: strings.Replace(err.Error(), ee.Error(), brief.Error(), 1), err: err}
}

// toldError is an error told in other words than its own.
type toldError struct {
	msg string
	err error
}

func (e *toldError) Error() string { return e.msg }
func (e *toldError) Unwrap() error { return e.err }
