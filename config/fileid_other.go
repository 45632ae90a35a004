//go:build !unix && !windows

package config

import "path/filepath"

// fileID returns the path with symbolic links resolved: the best identity
// of a file this platform offers here.
func fileID(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return "path:" + real, nil
}
