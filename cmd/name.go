package cmd

import (
	"path/filepath"
	"strings"
)

// CommandName is the command as the user typed it, for usage lines and the commands hints
// suggest. kubectl runs a plugin by its path and sets no variable saying so, so the name comes
// from argv[0]: an executable named kubectl-NAME is `kubectl NAME` (kubectl reads a dash in the
// file name as a space and an underscore as a dash), wherever it lies and whether kubectl or the
// user started it; any other name (a renamed copy) is kept as it is.
func CommandName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		return "kubectl " + strings.ReplaceAll(strings.ReplaceAll(plugin, "-", " "), "_", "-")
	}
	return base
}
