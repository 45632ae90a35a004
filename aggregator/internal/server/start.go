package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// How a server's session opens, in its era, and the requests of the
// aggregator's own it is sent.

// errStartupTimeout is the cause of a context that bounds a server's start.
var errStartupTimeout = errors.New("start-up timeout")

// IsStartCancel reports whether cause ended a request of the server's
// start (its initialize, its probe) on the start's own account: a timeout
// or a restart, of which a legacy server, knowing no request before
// initialize, is not told.
func IsStartCancel(cause error) bool {
	return errors.Is(cause, errStartupTimeout) || errors.Is(cause, errProbeTimeout) || errors.Is(cause, errRerun)
}

// Plan is how the servers start for the client: in the client's era
// when they can.
type Plan struct {
	// Probe: the client is modern; each server is asked server/discover
	// first, and initialized (legacy) when it does not answer with a
	// DiscoverResult.
	Probe bool
	// Init: the params of initialize for a legacy server.
	Init []byte
	// Scope: what the servers' answers may depend on of the client (its
	// protocol version and capabilities), under which what they declare
	// and list is remembered (Memory).
	Scope []byte
}

// errProbeTimeout ends a server/discover probe that got no answer in time.
var errProbeTimeout = errors.New("no answer to server/discover in time")

// errRerun ends a probe whose server exited and was started again.
var errRerun = errors.New("the server exited on server/discover and was started again")

// DefaultProbeTimeout is how long a server may take to answer the
// server/discover probe before it is taken for a legacy server (one that
// ignores requests before initialize).
const DefaultProbeTimeout = 3 * time.Second

// Launch spawns the server and opens its session (start) on a goroutine
// of the session's life, once: the first request that needs it, a reload
// or --check may ask; later calls do nothing.
func (s *Server) Launch(plan Plan) {
	if !s.launched.CompareAndSwap(false, true) {
		return
	}
	s.scope = plan.Scope // before its start: read by what it keeps
	s.set.Life.Go(func() {
		s.once.start.Do(func() {
			s.spawnOnce()
			s.start(plan)
		})
	})
}

// start opens the server's session in its era (open) and fetches its
// lists, all within the start-up timeout.
func (s *Server) start(plan Plan) {
	<-s.spawned
	if s.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeoutCause(s.set.Life.Context(), s.set.StartupTimeout, errStartupTimeout)
	defer cancel()
	if what, err := s.open(ctx, plan); err != nil {
		s.Drop(s.startError(what, ctx, err))
		return
	}
	s.markInited()
	s.events.Opened()
	if err := s.fetchLists(ctx); err != nil {
		s.Drop(s.startError("tools/list", ctx, err))
		return
	}
	s.mu.Lock()
	if s.state != Starting {
		s.mu.Unlock()
		return
	}
	s.state = Running
	startup, version := time.Since(s.startedAt), s.version
	s.startup = startup
	s.mu.Unlock()
	s.set.Log.Debugf("server %q: ready in %v, speaking %s", s.key, startup, version)
	s.remember()
	s.events.Up() // before its waiters go on: they find it in the session's registry
	s.markReady()
}

// open starts the server's session: for a modern client, a server/discover
// probe first; else, or when the probe finds a legacy server, initialize;
// and when initialize is refused by a server that speaks only the modern
// era, server/discover. It returns what failed and why.
func (s *Server) open(ctx context.Context, plan Plan) (string, error) {
	if plan.Probe {
		legacy, err := s.probe(ctx)
		if err == nil {
			return "", nil
		}
		if !legacy {
			return "server/discover", err
		}
		s.set.Log.Debugf("server %q: legacy server (server/discover: %v); initializing it", s.key, err)
	}
	err := s.initialize(ctx, plan.Init)
	var refusal *modernOnlyError
	if errors.As(err, &refusal) {
		s.set.Log.Debugf("server %q: %v; serving it in the %s era", s.key, err, eras.ModernVersion)
		if _, err := s.discover(ctx); err != nil {
			return "server/discover", err
		}
		return "", nil
	}
	return "initialize", err
}

// probe asks the server server/discover within ProbeTimeout. A server that
// answers as a legacy server, does not answer in time, or exits on it (and
// was started again) is a legacy server.
func (s *Server) probe(ctx context.Context) (legacy bool, err error) {
	rerunCtx, rerun := context.WithCancelCause(ctx)
	defer rerun(nil)
	pctx, cancel := context.WithTimeoutCause(rerunCtx, s.set.ProbeTimeout, errProbeTimeout)
	defer cancel()
	if r, ok := s.proc.(*stdio.Restartable); ok {
		r.Arm(func() { rerun(errRerun) })
		defer r.Disarm()
	}
	legacy, err = s.discover(pctx)
	if cause := context.Cause(pctx); err != nil && ctx.Err() == nil && (errors.Is(cause, errProbeTimeout) || errors.Is(cause, errRerun)) {
		return true, cause
	}
	return legacy, err
}

func (s *Server) startError(what string, ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errStartupTimeout) && ctx.Err() != nil {
		return s.Errorf("did not answer %s within the start-up timeout of %v", what, s.set.StartupTimeout)
	}
	return s.lostAtEnd(err)
}

// modernOnlyError is a server's refusal of initialize that names the
// modern version: it speaks only the modern era.
type modernOnlyError struct {
	key string
	err []byte
}

func (e *modernOnlyError) Error() string {
	return fmt.Sprintf("server %q refused initialize: %s", e.key, e.err)
}

func (s *Server) initialize(ctx context.Context, params []byte) error {
	resp, err := s.conn.Call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		if eras.RefusesLegacy(resp.Error) {
			return &modernOnlyError{key: s.key, err: resp.Error}
		}
		return s.Errorf("answered initialize with an error: %s", resp.Error)
	}
	if resp.Duplicate != "" {
		return s.DuplicateAnswer(resp.Duplicate)
	}
	version, _ := jsonrpc.StringMember(resp.Result, "protocolVersion")
	if !eras.IsLegacy(version) {
		return s.Errorf("answered initialize with protocol version %q, which is not one of %s", version, strings.Join(eras.LegacyVersions, ", "))
	}
	s.declare(version, resp.Result)
	return s.conn.Notify("notifications/initialized", nil)
}

// discover asks the server server/discover. A DiscoverResult that lists the
// modern version makes it a modern server. legacy reports that the server
// answered as a legacy server does (an error that is not a modern one, or
// a -32022 naming only legacy versions).
func (s *Server) discover(ctx context.Context) (legacy bool, err error) {
	resp, err := s.conn.Call(ctx, "server/discover", eras.WithMeta(nil, s.set.Meta()))
	if err != nil {
		return false, err
	}
	if resp.Error != nil {
		code, _ := jsonrpc.Member(resp.Error, "code")
		if string(code) != "-32022" { // not a modern error: a legacy server
			return true, s.Errorf("answered server/discover with an error: %s", resp.Error)
		}
		data, _ := jsonrpc.Member(resp.Error, "data")
		supported, _ := jsonrpc.Member(data, "supported")
		return eras.ListsLegacy(supported), s.Errorf("speaks none of %s: %s", strings.Join(eras.ModernVersions, ", "), resp.Error)
	}
	if resp.Duplicate != "" {
		return false, s.DuplicateAnswer(resp.Duplicate)
	}
	supported, _ := jsonrpc.Member(resp.Result, "supportedVersions")
	if !eras.Lists(supported, eras.ModernVersion) {
		return eras.ListsLegacy(supported), s.Errorf("supports %s, not %s", supported, eras.ModernVersion)
	}
	s.declare(eras.ModernVersion, resp.Result)
	return false, nil
}

// declare takes what the server declared in its initialize or
// server/discover result: its version, capabilities and instructions, and
// for the modern version its era and discover hint.
func (s *Server) declare(version string, result []byte) {
	declared, ok := jsonrpc.Member(result, "capabilities")
	if !ok || declared[0] != '{' {
		declared = []byte("{}")
	}
	instructions, _ := jsonrpc.StringMember(result, "instructions")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version, s.caps, s.declared, s.instructions = version, capabilities.ParseServer(result), declared, instructions
	if version == eras.ModernVersion {
		s.lists.Hints.Discover = eras.ReadHint(result, time.Now())
		s.modern.Store(true) // with its version: a Status never has one without the other
	}
}

// Call sends a request of the aggregator's own to the server (a list, a
// fan-out): a modern server gets the _meta of the client's era with it.
func (s *Server) Call(ctx context.Context, method string, params []byte) (*jsonrpc.Message, error) {
	if s.modern.Load() {
		params = eras.WithMeta(params, s.set.Meta())
	}
	return s.conn.Call(ctx, method, params)
}
