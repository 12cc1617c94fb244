// Package fieldpath is the one reading of a field path in the project: it parses the
// field.Path notation a suspect's path is written in (Parse, Parent), reads the scalar values
// of typed Kubernetes objects by path (Leaves, ValueAt, with the path stack a walk builds paths
// with only when asked for), and names a struct's fields as JSON does (JSONFieldsOf), for the
// walk and the revision diff alike.
//
// Invariant: pure functions of their inputs; the only state is a cache of the program's own
// struct types' JSON fields.
package fieldpath
