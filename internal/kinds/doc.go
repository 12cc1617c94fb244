// Package kinds is what each workload kind means to the tool, one adapter value per kind:
// its names (kind, group, resource, kubectl's short names and the words a user may type),
// its pod template and the template's field path, the copies it declares, the controller's
// word on it (generation observed, conditions, counts), its rollout strategy and whether
// kubectl rollout applies. The engine, the sources and the front ends look a kind up here
// instead of switching on its type or name, so adding a kind is one entry in Workloads.
//
// Invariant: pure functions of their inputs and one read-only table; no I/O, no clients, no
// imports of the project's other packages, so every package may import it.
package kinds
