//go:build race

package kill

// raceDetector: the tests run under -race, whose shadow memory and slower
// exits change what a memory cgroup's OOM kill does and when.
const raceDetector = true
