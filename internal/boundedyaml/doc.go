// Package boundedyaml converts YAML to JSON within a bound on what the JSON would hold.
//
// An alias repeats its anchor's whole value: a 1 MB document of 3,000 aliases of a 1 MiB
// anchor converts to 3 GB of JSON, past any bound on the size of the text read. ToJSON counts
// the expanded size first, in one pass over the parsed nodes (an anchor's size is counted once
// and reused by its aliases), and refuses a document past the bound with the line where it
// passed it. Invariant: no conversion allocates more than about the bound, whatever the input.
package boundedyaml
