//go:build !race

package kill

const raceDetector = false
