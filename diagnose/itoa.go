package diagnose

import "strconv"

// itoa is %d of a count, for the messages every workload writes: fmt.Sprintf boxes each
// argument, and those were a few percent of the engine's allocations.
func itoa[T ~int32 | ~int64 | ~int](n T) string { return strconv.FormatInt(int64(n), 10) }
