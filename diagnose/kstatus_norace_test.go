//go:build !race

package diagnose

// kstatusStride: every generated status combination is tried without the race detector.
const kstatusStride = 1
