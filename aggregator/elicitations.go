package aggregator

import "sync"

// This file bounds the URL-mode elicitations a server announced, which the
// client may later see completed (owners.go).

// urlElicitations are the URL-mode elicitations of one server that went up
// to the client (its elicitation/create, or a -32042 error's
// data.elicitations) and may still be completed, by elicitationId; the
// oldest are forgotten past maxElicitations.
type urlElicitations struct {
	mu    sync.Mutex // protects the fields below; a leaf
	open  map[string]bool
	order []string // ids in the order they went up, some perhaps taken
}

// maxElicitations bounds the URL elicitations of one server kept open.
const maxElicitations = 256

// add records an elicitation of the server that went up.
func (u *urlElicitations) add(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.open == nil {
		u.open = make(map[string]bool)
	}
	if u.open[id] {
		return
	}
	for len(u.open) >= maxElicitations && len(u.order) > 0 {
		delete(u.open, u.order[0])
		u.order = u.order[1:]
	}
	u.open[id] = true
	u.order = append(u.order, id)
}

// take reports whether id is an open elicitation of the server, and
// forgets it.
func (u *urlElicitations) take(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.open[id] {
		return false
	}
	delete(u.open, id)
	if len(u.order) > 2*maxElicitations { // taken ids left in order
		u.order = compact(u.order, u.open)
	}
	return true
}

// compact keeps the ids of order still open.
func compact(order []string, open map[string]bool) []string {
	kept := order[:0]
	for _, id := range order {
		if open[id] {
			kept = append(kept, id)
		}
	}
	return kept
}
