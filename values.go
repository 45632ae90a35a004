// This file reads the values of flags: sizes, durations and the name the
// aggregator is registered under.

package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// defaultMaxMessage is the default of --max-message-size.
const defaultMaxMessage = 256 << 20

// parseSize reads a size in bytes: a whole number, optionally followed by
// KiB, MiB or GiB (or K, M, G: the same).
func parseSize(v string) (int, error) {
	num, mult := v, 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > math.MaxInt/mult {
		return 0, fmt.Errorf("%q is not a size: want a number of bytes such as 1048576, or 64KiB, 256MiB, 1GiB", v)
	}
	return n * mult, nil
}

// parseTimeout reads a positive duration such as 30s or 1m30s.
func parseTimeout(v string) (time.Duration, error) {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return 0, fmt.Errorf("needs a unit: a duration such as %ss or 1m", v)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("not a duration: write one such as 30s, 1m or 1m30s")
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// parseInterval reads a duration that may be 0, such as --reload-poll's:
// a number without a unit other than 0 gets the message of parseTimeout.
func parseInterval(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("needs a unit: a duration such as %ss or 1m", v)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("not a duration: write one such as 2s, 500ms or 1m")
	}
	if d < 0 {
		return 0, errors.New("must not be negative (0 looks only on SIGHUP)")
	}
	return d, nil
}

// expandHome replaces a leading "~" of path ("~" alone, or "~/..."; on
// Windows "~\..." too) by the user's home directory: a client starts the
// aggregator without a shell, which would have done it.
func expandHome(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "~")
	if !ok || rest != "" && rest[0] != '/' && rest[0] != filepath.Separator {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("--config %s: %w", path, err)
	}
	return home + rest, nil
}

// parseServerName reads --registered-as: the name the aggregator has in
// the client's config, or its length as a number, and returns the length.
func parseServerName(v string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > 64 {
			return 0, errors.New("a length must be 1 to 64")
		}
		return n, nil
	}
	if v == "" {
		return 0, errors.New("must not be empty")
	}
	return utf8.RuneCountInString(v), nil
}
