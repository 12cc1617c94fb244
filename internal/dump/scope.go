package dump

import (
	"os"
	"path/filepath"
	"slices"
)

// namespaceFiles are files kubectl cluster-info dump --output-directory writes in every
// namespace's directory; a directory holding one is a namespace of that layout.
var namespaceFiles = []string{"events.json", "pods.json", "deployments.json", "services.json", "replicasets.json", "daemonsets.json", "replication-controllers.json"}

// otherNamespaces returns the directories of a dump in the layout of kubectl cluster-info dump
// --output-directory (nodes.json beside one directory per namespace) that hold namespaces
// other than those wanted, which a read need not open. It returns none unless every wanted
// namespace has its directory: a dump of another layout is read whole, and so is one without
// a wanted namespace, whose error then lists the namespaces it holds.
func otherNamespaces(root string, want []string) map[string]bool {
	if len(want) == 0 {
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	layout := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && isNamespaceDir(filepath.Join(root, e.Name())) {
			layout[e.Name()] = true
		}
	}
	for _, ns := range want {
		if !layout[ns] {
			return nil
		}
	}
	skip := map[string]bool{}
	for name := range layout {
		if !slices.Contains(want, name) {
			skip[filepath.Join(root, name)] = true
		}
	}
	return skip
}

func isNamespaceDir(dir string) bool {
	for _, f := range namespaceFiles {
		if info, err := os.Stat(filepath.Join(dir, f)); err == nil && info.Mode().IsRegular() {
			return true
		}
	}
	return false
}
