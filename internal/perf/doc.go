// Package perf holds the programs that internal/perf/callgrind.sh measures:
// cold-start allocation of a host (coldhost), a per_event stdio backend built
// on package server from exec to exit (perevent) beside a minimal
// encoding/json echo backend (echo), server.Handler accepting the valid
// fixture request beside rejecting small invalid ones (servehttp), and the
// two hot-path round trips beside their floors: a host over a persistent
// stdio child (stdiohost with perevent, or with the encoding/json
// floorchild) and a host with an HTTP backend in one process (httphost, sdk
// or raw). Package roundtrip holds what the round trips and the scale
// benchmarks of this package share.
package perf
