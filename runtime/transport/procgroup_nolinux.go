//go:build !linux

package transport

import "os"

// pipeIdentity is unavailable: processes that escaped a child's process
// group are not searched for on this platform.
func pipeIdentity(*os.File) (pipeID, bool) { return 0, false }

// pipeHeld reports false: nothing is searched for.
func pipeHeld(*os.File) bool { return false }

// killHolders does nothing on this platform.
func killHolders([]pipeID) {}
