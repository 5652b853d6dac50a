// Command emptyprog does nothing: the start-up cost of a Go program, the
// reference of procwalk --version's (BenchmarkOneShotRatio).
package main

func main() {}
