//go:build race

package validate

// raceEnabled: the race detector slows v6 about tenfold; the exhaustive
// differential tests then check a deterministic sample (they have no
// concurrency for the detector to see), and `go test` without -race runs
// them in full.
const raceEnabled = true
