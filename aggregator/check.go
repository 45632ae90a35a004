package aggregator

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
)

// This file is --check: the aggregator starts every server as a client
// would, and writes what each offers, under the names a client gets, and
// what failed.

// checkCapabilities are the capabilities Check declares, as the clients
// users run declare them (Claude Code, VS Code): a server may offer more
// tools to a client that can answer its requests (the reference
// "everything" server lists 16 tools to such a client, 13 to one that
// declares none). Check answers none of those requests: with no client,
// each gets "method not found".
const checkCapabilities = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`

// Check starts every child, initializes it as a client would (with the
// latest protocol version and checkCapabilities; a child that speaks only
// the modern era gets server/discover instead), lists its tools and
// writes a report to w: one row per server (a remote entry of the config
// as skipped), every tool under the name a client gets (those its entry
// exposes), what each entry hides and renames, then what went wrong. It
// stops the children and reports whether all of them started.
func (a *Aggregator) Check(ctx context.Context, w io.Writer) bool {
	a.client.begin(clientInit{era: eraLegacy, version: eras.LatestLegacy, caps: capabilities.ParseClient([]byte(checkCapabilities))})
	a.start.begin(a.client.plan(eras.LatestLegacy, false))
	a.start.awaitChildren(ctx, a.children())

	ok := true
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tPROTOCOL\tSTARTUP\tTOOLS")
	var tools []naming.Entry
	var problems, exposure []string
	for _, c := range a.children() {
		s := c.Status()
		if s.State != server.Running {
			ok = false
			failure := s.Failure
			if failure == nil {
				failure = fmt.Errorf("did not start: %v", context.Cause(ctx))
			}
			problems = append(problems, fmt.Sprintf("%s: %s", shown(c.key), shown(a.log.Conceal(failure.Error()))))
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\n", shown(c.key), server.Failed, shown(orDash(s.Version)))
			continue
		}
		exposed, what := c.toolView().checked(entryNames(s.Lists.Tools))
		for _, t := range exposed {
			tools = append(tools, naming.Entry{Key: c.key, Name: t})
		}
		if what != "" {
			exposure = append(exposure, shown(c.key)+": "+what)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d ms\t%d\n", shown(c.key), s.State, shown(s.Version), s.Startup.Round(time.Millisecond).Milliseconds(), len(exposed))
	}
	for _, sk := range a.opts.Skipped {
		fmt.Fprintf(tw, "%s\tskipped\t-\t-\t-\n", shown(sk.Key))
	}
	tw.Flush()
	a.writeCheckedTools(w, tools)
	a.writeExposure(w, append(exposure, a.catalog.checkedCompounds()...))
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nProblems:\n  %s\n", strings.Join(problems, "\n  "))
	}
	a.shutdown()
	return ok
}

// writeExposure writes what each server's entry hides and renames, and
// the entries skipped.
func (a *Aggregator) writeExposure(w io.Writer, exposure []string) {
	if len(exposure) > 0 {
		fmt.Fprintf(w, "\nExposed as the config says:\n  %s\n", strings.Join(exposure, "\n  "))
	}
	if len(a.opts.Skipped) > 0 {
		fmt.Fprintf(w, "\nSkipped (only stdio servers are served):\n")
		for _, sk := range a.opts.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", shown(sk.Key), sk.Why)
		}
	}
}

// writeCheckedTools lists every tool under its name, as a client the
// aggregator does not know gets it, and below it the name each known
// client gets where that differs by more than the separator (clients that
// get the same name on one line), with what the client will still do to
// it, if anything (for a server name longer than --registered-as says).
// A note after the list gives the separator of strict clients.
func (a *Aggregator) writeCheckedTools(w io.Writer, tools []naming.Entry) {
	n := a.opts.namingFor("")
	plain := n.Assign(tools)
	type served struct {
		k      naming.Client
		naming naming.Scheme
		names  []naming.Assigned
	}
	var clients []served
	for _, k := range naming.Clients() {
		n := a.opts.namingFor(k.Name())
		clients = append(clients, served{k, n, n.Assign(tools)})
	}
	fmt.Fprintf(w, "\nTools (%d):\n", len(tools))
	for i, t := range tools {
		if plain[i].Hidden {
			fmt.Fprintf(w, "  %s  (hidden: listed twice by its server)\n", shown(plain[i].Name))
			continue
		}
		fmt.Fprintf(w, "  %s\n", shown(plain[i].Name))
		var order []string
		labels := make(map[string][]string)
		for _, c := range clients {
			name := c.names[i].Name
			if name == plain[i].Name || name == t.Key+c.naming.Sep+t.Name {
				continue
			}
			if fate := c.k.Fate(a.opts.serverNameLen(), t.Key, t.Name, name); fate != "" && fate != "with characters replaced" {
				name += " (" + fate + ")"
			}
			if labels[name] == nil {
				order = append(order, name)
			}
			labels[name] = append(labels[name], c.k.Label)
		}
		for _, name := range order {
			fmt.Fprintf(w, "      %s: %s\n", strings.Join(labels[name], ", "), shown(name))
		}
	}
	strictSeparator := Options{Separator: a.opts.Separator, StrictNames: true}.namingFor("").Sep
	if strictSeparator != n.Sep {
		fmt.Fprintf(w, "\nStrict clients (Claude Desktop, or any with --strict-names) get %q between server key and tool name.\n", strictSeparator)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
