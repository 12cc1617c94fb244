// Package walk reads the scalar values of typed Kubernetes objects by field path: every set
// value with its path (Leaves), the value at one path (ValueAt), and the path stack a walk
// builds paths with only when asked for.
//
// Invariant: pure functions of their inputs; the only state is a cache of the program's own
// struct types' JSON fields.
package walk
