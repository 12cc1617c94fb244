package live

import "strings"

// Resource is one API resource the source reads, as an RBAC rule names it.
type Resource struct {
	// Group is the API group, "" for the core group; Resource is the plural resource name,
	// with its subresource after a slash (pods/log).
	Group, Resource string
	// Verbs are the verbs the source sends for it.
	Verbs []string
}

// Resources lists every resource the source reads and the verbs it needs: the kinds it lists
// and watches, and pods/log, whose tails it gets. A read-only role for the tool is this list;
// Secrets and ConfigMaps are not in it.
//
// hack/genrbac writes the ClusterRole in deploy/kubectl-diagnose.yaml from this list, and
// internal/serve's TestManifestsGrantExactlyWhatTheSourceReads holds the role to exactly it.
func Resources() []Resource {
	out := make([]Resource, 0, len(kinds)+1)
	for i := range kinds {
		gv, resource, _ := strings.Cut(kinds[i].Resource, " ")
		group, _, ok := strings.Cut(gv, "/")
		if !ok {
			group = ""
		}
		out = append(out, Resource{Group: group, Resource: resource, Verbs: []string{"get", "list", "watch"}})
	}
	return append(out, Resource{Group: "", Resource: "pods/log", Verbs: []string{"get"}})
}
