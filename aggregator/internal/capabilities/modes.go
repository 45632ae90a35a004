package capabilities

import "github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"

// Undeclared returns what a server's request asks of the client beyond the
// capability its method needs, when caps (the client's capabilities, raw:
// a legacy client's from initialize, a modern request's from its _meta)
// do not declare it, in the specification's dotted form; "" when they do,
// or when the method needs no more than its capability.
//
//   - elicitation/create in a mode (params.mode, "form" when absent) needs
//     elicitation.MODE: "elicitation.url" for a client that declared only
//     form, "elicitation.form" for one that declared only url. An
//     elicitation object that declares neither form nor url (the
//     2025-06-18 form, {}) declares form only.
//   - sampling/createMessage with tools (params.tools or
//     params.toolChoice) needs sampling.tools.
//
// A client that did not declare the method's capability at all is the
// caller's to refuse; Undeclared then says nothing.
func Undeclared(caps []byte, method string, params []byte) string {
	switch method {
	case "elicitation/create":
		el, ok := declared(caps, "elicitation")
		if !ok {
			return ""
		}
		mode, ok := jsonrpc.StringMember(params, "mode")
		if !ok {
			mode = "form"
		}
		_, form := declared(el, "form")
		_, url := declared(el, "url")
		if _, has := declared(el, mode); has || mode == "form" && !form && !url {
			return ""
		}
		return "elicitation." + mode
	case "sampling/createMessage":
		s, ok := declared(caps, "sampling")
		if !ok {
			return ""
		}
		_, tools := declared(params, "tools")
		_, choice := declared(params, "toolChoice")
		if _, has := declared(s, "tools"); (tools || choice) && !has {
			return "sampling.tools"
		}
	}
	return ""
}

// declared returns the member key of obj, and whether it is there and not
// null.
func declared(obj []byte, key string) ([]byte, bool) {
	v, ok := jsonrpc.Member(obj, key)
	return v, ok && string(v) != "null"
}
