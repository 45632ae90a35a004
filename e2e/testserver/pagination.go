package main

import (
	"encoding/json"
	"fmt"
)

// Pagination and the result shape shared by every list (tools, prompts,
// resources, resource templates).

// paginate returns the page of items that starts at cursor ("" = first page)
// and the cursor of the next page ("" = none).
func paginate(items [][]byte, params json.RawMessage, size int) (page [][]byte, next string, rerr *rpcError) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", &rpcError{code: -32602, message: "invalid params: " + err.Error()}
		}
	}
	start := 0
	if p.Cursor != nil {
		if _, err := fmt.Sscanf(*p.Cursor, "cursor-%d", &start); err != nil || start < 0 || start > len(items) {
			return nil, "", &rpcError{code: -32602, message: "invalid cursor"}
		}
	}
	end := len(items)
	if size > 0 && start+size < end {
		end = start + size
		next = fmt.Sprintf("cursor-%d", end)
	}
	return items[start:end], next, nil
}

// listResult builds {"<key>":[items...],"nextCursor":next}.
func listResult(key string, items [][]byte, next string) []byte {
	n := len(key) + 32
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":`...)
		b = append(b, jsonString(next)...)
	}
	return append(b, '}')
}
