// Package secretdump writes a dump that holds credentials where clusters hold them: the
// ready-then-fails fixture (a real API server's objects, testdata/fixtures) with a database
// password that changed between the two revisions, a database URL with a password, an API key
// and an admin token passed as flags, and failing log lines that carry a bearer token and the
// password. Tests of every output check that none of Secrets appears in what the tool prints
// or serves.
//
// Invariant: it is a test bed. Only tests import it, and what it writes is a copy in the
// directory it is given; the fixture itself is never changed.
package secretdump
