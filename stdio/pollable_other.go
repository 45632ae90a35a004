//go:build !unix

package stdio

import "os"

// Pollable returns f as it is: on this system Go's poller does not watch
// pipes (see the unix version).
func Pollable(f *os.File) (pf *os.File, restore func()) { return f, func() {} }
