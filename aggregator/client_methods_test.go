package aggregator

import (
	"slices"
	"testing"
)

// The method tables say which requests take input: a child asks for it
// with sampling, elicitation and roots (each needing the client's
// capability of that name), during a call, a prompt or a read.
func TestMethodTablesInput(t *testing.T) {
	for method, want := range map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"} {
		if need, ok := inputNeed(method); !ok || need != want {
			t.Errorf("inputNeed(%s) = %q, %t; want %q, true", method, need, ok, want)
		}
	}
	for _, method := range []string{"ping", "tasks/get", "tasks/list", "unknown/method"} {
		if need, ok := inputNeed(method); ok {
			t.Errorf("inputNeed(%s) = %q, true; want no input", method, need)
		}
	}
	var input []string
	for name, m := range clientMethods {
		if m.input {
			input = append(input, name)
		}
	}
	slices.Sort(input)
	if want := []string{"prompts/get", "resources/read", "tools/call"}; !slices.Equal(input, want) {
		t.Errorf("client methods that take input: %v, want %v", input, want)
	}
}
