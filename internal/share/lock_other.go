//go:build !unix

package share

import "errors"

// lockFile is unix-only for now: --share is not supported elsewhere yet.
func lockFile(path string) (func(), error) {
	return nil, errors.New("share: --share is not supported on this system yet")
}
