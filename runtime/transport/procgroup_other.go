//go:build !unix

package transport

import (
	"os"
	"os/exec"
)

// ownGroup leaves cmd in the harness's process group: this platform has no
// process groups that the transport could kill.
func ownGroup(*exec.Cmd) {}

// killGroup kills p only; processes it started are not reached, and the
// post-exit read deadline bounds how long they can hold its pipes.
func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}
