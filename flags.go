package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// The command line: the flags, read and checked.

// flags are the command line's settings.
type flags struct {
	configPath, separator, name string
	startupTimeout, reloadPoll  time.Duration
	probeTimeout, inputTimeout  time.Duration
	maxMessage, serverNameLen   int
	check, debug, showVersion   bool
	strictNames, noMemory       bool
	share                       bool
	shareIdle                   time.Duration
}

// parseFlags reads and checks the command line; usage goes to stdout for
// --help and to stderr for a mistake.
func parseFlags(args []string, stdout, stderr io.Writer) (flags, error) {
	f, fs, valueErr := newFlagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return *f, err
		}
		fmt.Fprint(stderr, usage)
		return *f, &exitError{2, flagError(err, *valueErr, fs)}
	}
	separatorGiven := false
	fs.Visit(func(fl *flag.Flag) { separatorGiven = separatorGiven || fl.Name == "separator" })
	switch {
	case f.showVersion:
		return *f, nil
	case fs.NArg() > 0:
		fmt.Fprint(stderr, usage)
		return *f, &exitError{2, fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	case f.configPath == "":
		fmt.Fprint(stderr, usage)
		return *f, &exitError{2, errors.New("--config PATH is required")}
	case separatorGiven && f.separator == "":
		return *f, &exitError{2, errors.New("--separator must not be empty")}
	}
	var err error
	if f.configPath, err = expandHome(f.configPath); err != nil {
		return *f, &exitError{2, err}
	}
	return *f, nil
}

// newFlagSet defines the flags into f; valueErr receives the error of a
// flag value that does not parse, in our own words.
func newFlagSet() (*flags, *flag.FlagSet, *error) {
	f := &flags{startupTimeout: 30 * time.Second, reloadPoll: defaultReloadPoll, maxMessage: defaultMaxMessage, shareIdle: defaultShareIdle,
		probeTimeout: aggregator.DefaultProbeTimeout, inputTimeout: aggregator.DefaultInputTimeout}
	valueErr := new(error)
	fs := flag.NewFlagSet("mcp-simple-aggregator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.configPath, "config", "", "")
	fs.StringVar(&f.separator, "separator", "", "")
	fs.StringVar(&f.name, "name", "mcp-simple-aggregator", "")
	fs.BoolVar(&f.strictNames, "strict-names", false, "")
	fs.BoolVar(&f.check, "check", false, "")
	fs.BoolVar(&f.noMemory, "no-memory", false, "")
	fs.BoolVar(&f.share, "share", false, "")
	fs.BoolVar(&f.debug, "debug", false, "")
	fs.BoolVar(&f.showVersion, "version", false, "")
	value := func(name string, parse func(string) error) {
		fs.Func(name, "", func(v string) error {
			if err := parse(v); err != nil {
				*valueErr = fmt.Errorf("--%s %s: %w", name, v, err)
				return err
			}
			return nil
		})
	}
	value("startup-timeout", func(v string) (err error) {
		f.startupTimeout, err = parseTimeout(v)
		return err
	})
	value("reload-poll", func(v string) (err error) {
		f.reloadPoll, err = parseInterval(v)
		return err
	})
	value("probe-timeout", func(v string) (err error) {
		f.probeTimeout, err = parseTimeout(v)
		return err
	})
	value("input-timeout", func(v string) (err error) {
		f.inputTimeout, err = parseTimeout(v)
		return err
	})
	value("max-message-size", func(v string) (err error) {
		f.maxMessage, err = parseSize(v)
		return err
	})
	value("share-idle", func(v string) (err error) {
		f.shareIdle, err = parseTimeout(v)
		return err
	})
	value("registered-as", func(v string) (err error) {
		f.serverNameLen, err = parseServerName(v)
		return err
	})
	return f, fs, valueErr
}

// flagError restates an error of the flag package as the usage text names
// flags, with two dashes, and suggests the flag meant by an unknown one.
func flagError(err, valueErr error, fs *flag.FlagSet) error {
	if valueErr != nil {
		return valueErr
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
		msg = "unknown flag --" + strings.TrimPrefix(name, "-")
		if near := config.Nearest(strings.TrimPrefix(name, "-"), names); near != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", near)
		}
		return errors.New(msg)
	}
	if strings.HasPrefix(msg, "invalid boolean value") {
		msg = strings.TrimSuffix(msg, ": parse error") + ": give it alone, or as =true or =false"
	}
	return errors.New(flagNameInError.ReplaceAllString(msg, "$1--$2"))
}

// flagNameInError finds a flag named with one dash in the flag package's
// errors ("flag needs an argument: -config", "... for -debug: ...").
var flagNameInError = regexp.MustCompile(`(^|[ :])-{1,2}([a-z][a-z-]*)`)
