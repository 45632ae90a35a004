package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The builtin tools that answer on their own: answers of every shape,
// delays, progress, notifications (log, change, notify), a crash (crash)
// and a pause in reading stdin (deaf).

// toolOwnName answers with the name the tool was called by.
func toolOwnName(_ *server, c *toolCall) ([]byte, *rpcError) {
	return textResult(c.name, false), nil
}

// toolEcho answers the raw arguments bytes, as text and as structuredContent.
func toolEcho(_ *server, c *toolCall) ([]byte, *rpcError) {
	b := make([]byte, 0, 2*len(c.args)+80)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = append(b, jsonString(string(c.args))...)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, c.args...)
	return append(b, '}'), nil
}

func toolEnv(_ *server, c *toolCall) ([]byte, *rpcError) {
	return textResult(os.Getenv(c.str("name", "")), false), nil
}

func toolSlow(s *server, c *toolCall) ([]byte, *rpcError) {
	t := time.NewTimer(time.Duration(c.num("ms", 60000)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return textResult("done", false), nil
	case <-c.ctx.Done():
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
}

func toolProgress(s *server, c *toolCall) ([]byte, *rpcError) {
	token, ok := c.meta["progressToken"]
	if !ok || len(token) == 0 || string(token) == "null" {
		return nil, &rpcError{code: -32602, message: "progress needs _meta.progressToken"}
	}
	steps := c.num("steps", 3)
	pause := time.Duration(c.num("ms", 0)) * time.Millisecond
	for i := int64(1); i <= steps; i++ {
		if pause > 0 {
			select {
			case <-time.After(pause):
			case <-c.ctx.Done():
				s.logf("cancelled %s", c.id)
				return nil, errNoReply
			}
		}
		p := []byte(`{"progressToken":`)
		p = append(p, token...)
		p = fmt.Appendf(p, `,"progress":%d,"total":%d,"message":"step %d"}`, i, steps, i)
		s.out.writeLine(notificationLine("notifications/progress", p))
	}
	return textResult("progressed", false), nil
}

func toolCrash(s *server, _ *toolCall) ([]byte, *rpcError) {
	crashing.Lock() // never unlocked: the process exits with 3, not 0
	s.logf("crash requested")
	if last := os.Getenv("TESTSERVER_LAST_WORDS"); last != "" {
		s.logf("%s", last) // a secret, say: what a server that fails may print
	}
	os.Exit(3)
	return nil, errNoReply
}

func toolBig(_ *server, c *toolCall) ([]byte, *rpcError) {
	n := c.num("bytes", 1<<20)
	if n < 0 {
		n = 0
	}
	return textResult(strings.Repeat("x", int(n)), false), nil
}

func toolFail(_ *server, _ *toolCall) ([]byte, *rpcError) {
	return nil, &rpcError{code: -32042, message: "custom failure", data: []byte(`{"why":"asked to fail <&>"}`)}
}

func toolIsError(_ *server, _ *toolCall) ([]byte, *rpcError) {
	return textResult("tool error", true), nil
}

func toolLog(s *server, c *toolCall) ([]byte, *rpcError) {
	data, ok := c.argm["text"]
	if !ok {
		data = json.RawMessage(`""`)
	}
	p := []byte(`{"level":`)
	p = append(p, jsonString(c.str("level", "info"))...)
	p = append(p, `,"logger":"testserver","data":`...)
	p = append(p, bytes.TrimSpace(data)...)
	p = append(p, '}')
	s.out.writeLine(notificationLine("notifications/message", p))
	return textResult("logged", false), nil
}

// toolChange adds a tool (or, with arguments.kind "prompts" or
// "resources", a prompt or a resource) and says that list changed.
func toolChange(s *server, c *toolCall) ([]byte, *rpcError) {
	kind := c.str("kind", "tools")
	list := map[string]*[]string{"tools": &s.added, "prompts": &s.addedPrompts, "resources": &s.addedResources}[kind]
	if list == nil {
		return nil, &rpcError{code: -32602, message: "kind must be tools, prompts or resources"}
	}
	s.mu.Lock()
	name := "added" + strconv.Itoa(len(*list)+1)
	*list = append(*list, name)
	s.mu.Unlock()
	s.out.writeLine(notificationLine("notifications/"+kind+"/list_changed", nil))
	return textResult(name, false), nil
}

func toolNotify(s *server, c *toolCall) ([]byte, *rpcError) {
	uri := c.str("uri", "test://"+s.cfg.name+"/r0")
	s.out.writeLine(notificationLine("notifications/resources/updated",
		append(append([]byte(`{"uri":`), jsonString(uri)...), '}')))
	if c.flag("url") { // the URL elicitation e1 first, whose answer it waits for
		_, answered := s.sendRequest("elicitation/create",
			[]byte(`{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}`))
		select {
		case <-answered:
		case <-c.ctx.Done():
			return nil, errNoReply
		}
	}
	s.out.writeLine(notificationLine("notifications/elicitation/complete", []byte(`{"elicitationId":"e1"}`)))
	return textResult("notified", false), nil
}

func toolInitParams(s *server, _ *toolCall) ([]byte, *rpcError) {
	s.mu.Lock()
	p := s.initParams
	s.mu.Unlock()
	if p == nil {
		p = json.RawMessage("null")
	}
	return textResult(string(p), false), nil
}

func toolDeaf(s *server, c *toolCall) ([]byte, *rpcError) {
	s.readGate.Lock()
	s.logf("deaf")
	time.Sleep(time.Duration(c.num("ms", 2000)) * time.Millisecond)
	s.readGate.Unlock()
	return textResult("heard again", false), nil
}

func toolBadAnswer(s *server, c *toolCall) ([]byte, *rpcError) {
	s.out.writeLine([]byte(`{"jsonrpc":"2.0","id":` + string(c.id) + `,"error":5}`))
	return nil, errNoReply
}
