// This file applies the edits of the config file while the client stays
// connected.

package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// defaultReloadPoll is the default of --reload-poll.
const defaultReloadPoll = 2 * time.Second

// followConfig applies the edits of the config file while the client stays
// connected (aggregator.Reload): the file is looked at every --reload-poll
// and at once on SIGHUP. A file that no longer loads changes nothing: one
// warning names every problem, and the next good save applies. A file
// that other users can write (config.CheckOwnerOnly) is not followed: that
// is said once, at launch or when it becomes so, with the fix. It returns
// a channel closed once it has stopped, after ctx ends.
func followConfig(ctx context.Context, w *config.Watcher, f flags, log *aggregator.Logger, agg *aggregator.Aggregator) <-chan struct{} {
	told := false // that the file is open to others
	if err := config.CheckOwnerOnly(f.configPath); err != nil {
		log.Warnf("%v (see README.md#editing-the-config)", err)
		told = true
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // never comes on Windows: the poll does
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer signal.Stop(hup)
		w.Run(ctx, f.reloadPoll, hup, func(cfg *config.Config, err error) {
			switch {
			case errors.Is(err, config.ErrOpen) && told:
				log.Debugf("config %s changed; not applied: other users can write it", f.configPath)
				return
			case errors.Is(err, config.ErrOpen):
				log.Warnf("%v (see README.md#editing-the-config)", err)
				told = true
				return
			}
			told = false
			if err != nil {
				log.Warnf("the config changed but was not applied; the servers keep running as they were (see README.md#editing-the-config): %v", err)
				return
			}
			for _, w := range cfg.Warnings {
				log.Warnf("%s", w)
			}
			log.Debugf("config %s read again", f.configPath)
			agg.Reload(cfg.Servers, cfg.Compound...)
		})
	}()
	return done
}
