//go:build race

package diagnose

// kstatusStride thins the generated status combinations under the race detector, which makes
// each diagnosis about ten times slower and finds no more there. 7 is prime to every
// dimension's size, so the sample still walks every value of each.
const kstatusStride = 7
