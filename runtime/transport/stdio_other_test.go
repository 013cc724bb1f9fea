//go:build !unix

package transport_test

// unixChild knows no mode on this platform.
func unixChild(string) (int, bool) { return 0, false }
