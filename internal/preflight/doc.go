// Package preflight checks Deployment, StatefulSet and DaemonSet manifests against the live
// cluster before they are applied: would the copies be admitted, scheduled, counted against
// quota, reached by their Services, and what does the new spec change and leave unseen.
//
// The checks (Check) are pure functions of the manifests (Read) and a small read model of
// cluster facts (Facts); Load fills the facts with get and list requests only, and reads
// ConfigMaps and Secrets, when asked to, by metadata alone, so their data never crosses the
// wire. Nothing here writes to a cluster.
package preflight
