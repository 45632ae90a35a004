//go:build !unix

package share

import "syscall"

// detached would be DETACHED_PROCESS|CREATE_NEW_PROCESS_GROUP on Windows;
// --share is unix-only for now.
func detached() *syscall.SysProcAttr { return nil }

// Supported: --share works on this system.
const Supported = false
