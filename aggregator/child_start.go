package aggregator

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

// startPlan is how the children start for the client: in the client's era
// when they can.
type startPlan struct {
	// probe: the client is modern; each child is asked server/discover
	// first, and initialized (legacy) when it does not answer with a
	// DiscoverResult.
	probe bool
	// init: the params of initialize for a legacy child.
	init []byte
}

// errProbeTimeout ends a server/discover probe that got no answer in time.
var errProbeTimeout = errors.New("no answer to server/discover in time")

// errRerun ends a probe whose child exited and was started again.
var errRerun = errors.New("the server exited on server/discover and was started again")

// DefaultProbeTimeout is how long a child may take to answer the
// server/discover probe before it is taken for a legacy server (one that
// ignores requests before initialize).
const DefaultProbeTimeout = 3 * time.Second

// launch spawns the child and opens its session (start), once: the first
// request that needs it, a reload or --check may ask.
func (c *child) launch(plan startPlan) {
	c.launched.Store(true)
	c.once.start.Do(func() {
		c.spawnOnce()
		c.start(plan)
	})
}

// start opens the child's session in its era (open) and fetches its
// lists, all within the start-up timeout.
func (c *child) start(plan startPlan) {
	<-c.spawned
	if c.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeoutCause(c.host.life.ctx, c.host.settings.startupTimeout, errStartupTimeout)
	defer cancel()
	if what, err := c.open(ctx, plan); err != nil {
		c.drop(c.startError(what, ctx, err))
		return
	}
	c.markInited()
	c.era().opened(c)
	if err := c.fetchLists(ctx); err != nil {
		c.drop(c.startError("tools/list", ctx, err))
		return
	}
	c.mu.Lock()
	if c.state != stateStarting {
		c.mu.Unlock()
		return
	}
	c.state = stateRunning
	c.startup = time.Since(c.startedAt)
	c.mu.Unlock()
	c.host.log.Debugf("server %q: ready in %v, speaking %s", c.key, c.startup, c.status().version)
	c.host.session.rebuild()
	c.markReady()
	c.host.session.childUp(c)
}

// open starts the child's session: for a modern client, a server/discover
// probe first; else, or when the probe finds a legacy server, initialize;
// and when initialize is refused by a server that speaks only the modern
// era, server/discover. It returns what failed and why.
func (c *child) open(ctx context.Context, plan startPlan) (string, error) {
	if plan.probe {
		legacy, err := c.probe(ctx)
		if err == nil {
			return "", nil
		}
		if !legacy {
			return "server/discover", err
		}
		c.host.log.Debugf("server %q: legacy server (server/discover: %v); initializing it", c.key, err)
	}
	err := c.initialize(ctx, plan.init)
	var refusal *modernOnlyError
	if errors.As(err, &refusal) {
		c.host.log.Debugf("server %q: %v; serving it in the %s era", c.key, err, eras.ModernVersion)
		if _, err := c.discover(ctx); err != nil {
			return "server/discover", err
		}
		return "", nil
	}
	return "initialize", err
}

// probe asks the child server/discover within ProbeTimeout. A child that
// answers as a legacy server, does not answer in time, or exits on it (and
// was started again) is a legacy server.
func (c *child) probe(ctx context.Context) (legacy bool, err error) {
	rerunCtx, rerun := context.WithCancelCause(ctx)
	defer rerun(nil)
	pctx, cancel := context.WithTimeoutCause(rerunCtx, c.host.settings.probeTimeout, errProbeTimeout)
	defer cancel()
	if r, ok := c.proc.(*stdio.Restartable); ok {
		r.Arm(func() { rerun(errRerun) })
		defer r.Disarm()
	}
	legacy, err = c.discover(pctx)
	if cause := context.Cause(pctx); err != nil && ctx.Err() == nil && (errors.Is(cause, errProbeTimeout) || errors.Is(cause, errRerun)) {
		return true, cause
	}
	return legacy, err
}

func (c *child) startError(what string, ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errStartupTimeout) && ctx.Err() != nil {
		return c.errorf("did not answer %s within the start-up timeout of %v", what, c.host.settings.startupTimeout)
	}
	return c.lostAtEnd(err)
}

// modernOnlyError is a child's refusal of initialize that names the
// modern version: it speaks only the modern era.
type modernOnlyError struct {
	key string
	err []byte
}

func (e *modernOnlyError) Error() string {
	return fmt.Sprintf("server %q refused initialize: %s", e.key, e.err)
}

func (c *child) initialize(ctx context.Context, params []byte) error {
	resp, err := c.conn.Call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		if eras.RefusesLegacy(resp.Error) {
			return &modernOnlyError{key: c.key, err: resp.Error}
		}
		return c.errorf("answered initialize with an error: %s", resp.Error)
	}
	if resp.Duplicate != "" {
		return c.duplicateAnswer(resp.Duplicate)
	}
	version, _ := jsonrpc.StringMember(resp.Result, "protocolVersion")
	if !eras.IsLegacy(version) {
		return c.errorf("answered initialize with protocol version %q, which is not one of %s", version, strings.Join(eras.LegacyVersions, ", "))
	}
	caps := capabilities.ParseServer(resp.Result)
	instructions, _ := jsonrpc.StringMember(resp.Result, "instructions")
	c.mu.Lock()
	c.version, c.caps, c.instructions = version, caps, instructions
	c.mu.Unlock()
	c.remember(resp.Result)
	c.host.client.era().serverVersion(c, version)
	return c.conn.Notify("notifications/initialized", nil)
}

// discover asks the child server/discover. A DiscoverResult that lists the
// modern version makes it a modern child. legacy reports that the child
// answered as a legacy server does (an error that is not a modern one, or
// a -32022 naming only legacy versions).
func (c *child) discover(ctx context.Context) (legacy bool, err error) {
	resp, err := c.conn.Call(ctx, "server/discover", eras.WithMeta(nil, c.host.client.childMeta()))
	if err != nil {
		return false, err
	}
	if resp.Error != nil {
		code, _ := jsonrpc.Member(resp.Error, "code")
		if string(code) != "-32022" { // not a modern error: a legacy server
			return true, c.errorf("answered server/discover with an error: %s", resp.Error)
		}
		data, _ := jsonrpc.Member(resp.Error, "data")
		supported, _ := jsonrpc.Member(data, "supported")
		return eras.ListsLegacy(supported), c.errorf("speaks none of %s: %s", strings.Join(eras.ModernVersions, ", "), resp.Error)
	}
	if resp.Duplicate != "" {
		return false, c.duplicateAnswer(resp.Duplicate)
	}
	supported, _ := jsonrpc.Member(resp.Result, "supportedVersions")
	if !eras.Lists(supported, eras.ModernVersion) {
		return eras.ListsLegacy(supported), c.errorf("supports %s, not %s", supported, eras.ModernVersion)
	}
	instructions, _ := jsonrpc.StringMember(resp.Result, "instructions")
	c.mu.Lock()
	c.version, c.caps, c.instructions = eras.ModernVersion, capabilities.ParseServer(resp.Result), instructions
	c.hints.discover = eras.ReadHint(resp.Result, time.Now())
	c.mu.Unlock()
	c.remember(resp.Result)
	c.modern.Store(true)
	return false, nil
}

// call sends a request of the aggregator's own to the child (a list, a
// fan-out): a modern child gets the _meta of the client's era with it.
func (c *child) call(ctx context.Context, method string, params []byte) (*jsonrpc.Message, error) {
	return c.conn.Call(ctx, method, c.era().ownRequest(params, c.host.client.childMeta))
}
