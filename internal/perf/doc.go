// Package perf holds the programs that internal/perf/callgrind.sh measures:
// cold-start allocation of a host (coldhost), a per_event stdio backend built
// on package server from exec to exit (perevent) beside a minimal
// encoding/json echo backend (echo), and server.Handler accepting the valid
// fixture request beside rejecting small invalid ones (servehttp).
package perf
