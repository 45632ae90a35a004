package aggregator

import (
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
)

// childHost is what a child needs of the session it serves, and all that
// a child's own code (its methods, and the exchanges its reader drives)
// uses of it: the settings of its process and messages, the log, the
// session's life, the client's side, the tables that tie ids across the
// client and the servers, a modern client's streams, and the events it
// tells the session of. The registry, the other children, naming and
// reloads are not in it; the client's calls a child carries belong to the
// client's side and keep their Aggregator. Every child of a session
// shares one.
type childHost struct {
	settings childSettings
	log      *Logger
	life     *lifetime
	client   *clientSession
	relay    *relayTables
	listens  *listenSet
	session  sessionEvents
}

// childSettings are what Options say of a server: what every server of
// the session shares (package server's), and how long the session waits
// for the client's answers to its requests and for its tasks once it died.
type childSettings struct {
	server               server.Settings
	clientRequestTimeout time.Duration // its requests to the client
	graces               graces        // of its tasks
}

// sessionEvents are what a child tells the session of itself, and the one
// thing it asks of it (the Aggregator is the one implementation).
type sessionEvents interface {
	rebuild()                   // its lists changed: the registry is built anew
	childUp(c *child)           // it is up and in the registry
	tellClient(method string)   // a list changed: the client is told, or will be
	uriOwner(uri string) *child // the server that owns a resource URI (owners.go); never waits
}
