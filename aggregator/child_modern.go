package aggregator

import "github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"

// What the aggregator asks a child of the other era: a log level, a listen.

// logLevelFor sets a legacy child that has logging to the level a modern
// request to it asks for, before the request goes (the line is queued
// first), unless it is set to that level already.
func (c *child) logLevelFor(level string) {
	c.logging.Add(1)
	c.SetLevel(level)
}

// catchUpLevel sets a legacy child that opens its session after the
// client's logging/setLevel (which went to the servers up then) to that
// level, as a direct connection would have.
func (c *child) catchUpLevel() {
	if level := c.host.client.level(); level != "" {
		c.SetLevel(level)
	}
}

// listenForChanges opens the aggregator's own subscriptions/listen at a
// modern child, for the list changes that keep the registry fresh (its
// list_changed notifications are handled as a legacy child's are). It
// stays open for the child's life.
func (c *child) listenForChanges() {
	caps := c.capabilities()
	f := listFilter{changes: make(map[string]bool)}
	for i := range listKinds {
		if k := &listKinds[i]; k.Offered(caps) {
			f.changes[k.Changed] = true
		}
	}
	if _, err := c.openListen(f, func(m *jsonrpc.Message, err error) {
		if err == nil && m.Error != nil {
			c.host.log.Warnf("server %q: subscriptions/listen: %s; its list changes will not be seen", c.key, m.Error)
		}
	}); err != nil {
		c.host.log.Debugf("server %q: subscriptions/listen: %v", c.key, err)
	}
}
