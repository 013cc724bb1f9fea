// Command ahp-interop is the Go SDK's cross-language interop adapter.
package main

func main() {}
