package main

import (
	"encoding/json"
	"strings"
)

// Resources, prompts, completion and logging: each served only when its
// capability was asked for with -caps.

func (s *server) resourceURI(i int) string {
	return "test://" + s.cfg.name + "/r" + string(rune('0'+i))
}

const resourceCount = 3

func (s *server) templatePrefix() string { return "test://" + s.cfg.name + "/t/" }

func (s *server) listResources(params json.RawMessage) ([]byte, *rpcError) {
	items := make([][]byte, 0, resourceCount)
	for i := 0; i < resourceCount; i++ {
		uri := s.resourceURI(i)
		b := []byte(`{"uri":`)
		b = append(b, jsonString(uri)...)
		b = append(b, `,"name":"r`...)
		b = append(b, byte('0'+i))
		b = append(b, `","mimeType":"text/plain"}`...)
		items = append(items, b)
	}
	s.mu.Lock()
	for _, name := range s.addedResources {
		items = append(items, []byte(`{"uri":`+string(jsonString("test://"+s.cfg.name+"/"+name))+`,"name":`+string(jsonString(name))+`}`))
	}
	s.mu.Unlock()
	items = append(items, s.malformedEntries("resources")...)
	page, next, rerr := paginate(items, params, s.cfg.page)
	if rerr != nil {
		return nil, rerr
	}
	return listResult("resources", page, next), nil
}

func (s *server) listResourceTemplates(params json.RawMessage) ([]byte, *rpcError) {
	b := []byte(`{"uriTemplate":`)
	b = append(b, jsonString(s.templatePrefix()+"{id}")...)
	b = append(b, `,"name":"t","mimeType":"text/plain"}`...)
	page, next, rerr := paginate(append([][]byte{b}, s.malformedEntries("resourceTemplates")...), params, s.cfg.page)
	if rerr != nil {
		return nil, rerr
	}
	return listResult("resourceTemplates", page, next), nil
}

// knownURI reports whether uri is a listed resource or matches the template.
func (s *server) knownURI(uri string) bool {
	for i := 0; i < resourceCount; i++ {
		if uri == s.resourceURI(i) {
			return true
		}
	}
	rest, ok := strings.CutPrefix(uri, s.templatePrefix())
	return ok && rest != "" && !strings.Contains(rest, "/")
}

func uriParam(params json.RawMessage) (string, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == "" {
		return "", &rpcError{code: -32602, message: "params.uri is required"}
	}
	return p.URI, nil
}

func (s *server) readResource(params json.RawMessage) ([]byte, *rpcError) {
	uri, rerr := uriParam(params)
	if rerr != nil {
		return nil, rerr
	}
	quoted := jsonString(uri)
	if !s.knownURI(uri) {
		return nil, &rpcError{code: -32002, message: "Resource not found",
			data: append(append([]byte(`{"uri":`), quoted...), '}')}
	}
	b := []byte(`{"contents":[{"uri":`)
	b = append(b, quoted...)
	b = append(b, `,"mimeType":"text/plain","text":`...)
	b = append(b, jsonString("content of "+uri)...)
	return append(b, "}]}"...), nil
}

func (s *server) subscribe(params json.RawMessage, on bool) ([]byte, *rpcError) {
	uri, rerr := uriParam(params)
	if rerr != nil {
		return nil, rerr
	}
	s.mu.Lock()
	if on {
		s.subs[uri] = true
	} else {
		delete(s.subs, uri)
	}
	s.mu.Unlock()
	if on {
		s.logf("subscribed %s", uri)
	} else {
		s.logf("unsubscribed %s", uri)
	}
	return []byte("{}"), nil
}

const greetDef = `{"name":"greet","description":"say hello","arguments":[{"name":"name","description":"who to greet","required":false}]}`

func (s *server) listPrompts(params json.RawMessage) ([]byte, *rpcError) {
	items := [][]byte{[]byte(greetDef)}
	s.mu.Lock()
	for _, name := range s.addedPrompts {
		items = append(items, []byte(`{"name":`+string(jsonString(name))+`,"description":"added by change"}`))
	}
	s.mu.Unlock()
	items = append(items, s.malformedEntries("prompts")...)
	page, next, rerr := paginate(items, params, s.cfg.page)
	if rerr != nil {
		return nil, rerr
	}
	return listResult("prompts", page, next), nil
}

func (s *server) getPrompt(params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{code: -32602, message: "invalid prompts/get params: " + err.Error()}
	}
	if p.Name != "greet" {
		return nil, &rpcError{code: -32602, message: "Unknown prompt: " + p.Name}
	}
	who := p.Arguments["name"]
	if who == "" {
		who = s.cfg.name
	}
	b := []byte(`{"description":`)
	b = append(b, jsonString("greeting from "+s.cfg.name)...)
	b = append(b, `,"messages":[{"role":"user","content":{"type":"text","text":`...)
	b = append(b, jsonString("Hello "+who)...)
	return append(b, "}}]}"...), nil
}

// complete answers NAME-a, NAME-b and "<ref.type>:<ref.name or ref.uri>", so
// a test sees which server answered and which ref it received.
func (s *server) complete(params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{code: -32602, message: "invalid completion/complete params: " + err.Error()}
	}
	ref := p.Ref.Name
	if p.Ref.Type == "ref/resource" {
		ref = p.Ref.URI
	}
	b := []byte(`{"completion":{"values":[`)
	b = append(b, jsonString(s.cfg.name+"-a")...)
	b = append(b, ',')
	b = append(b, jsonString(s.cfg.name+"-b")...)
	b = append(b, ',')
	b = append(b, jsonString(p.Ref.Type+":"+ref)...)
	return append(b, `],"total":3,"hasMore":false}}`...), nil
}

func (s *server) setLevel(params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Level string `json:"level"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Level == "" {
		return nil, &rpcError{code: -32602, message: "params.level is required"}
	}
	s.logf("level set to %s", p.Level)
	return []byte("{}"), nil
}
