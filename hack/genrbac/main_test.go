package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
)

var manifest = filepath.Join("..", "..", "deploy", "kubectl-diagnose.yaml")

// TestManifestIsGenerated fails when the ClusterRole in deploy/kubectl-diagnose.yaml differs
// from what the source's kind tables grant: a kind added to snapshot.Kinds or internal/kinds
// and not to the role, or the role edited by hand. Run make docs.
func TestManifestIsGenerated(t *testing.T) {
	got, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	want, err := withRules(got, rules(live.Resources()))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("deploy/kubectl-diagnose.yaml's ClusterRole is not what hack/genrbac makes of the kinds the source reads; run make docs")
	}
}

// Every workload kind of the table is granted, by its group and resource.
func TestRulesGrantEveryWorkloadKind(t *testing.T) {
	r := string(rules(live.Resources()))
	for _, k := range kinds.Workloads {
		line := ""
		for _, l := range strings.Split(r, "\n  - ") {
			if strings.HasPrefix(l, `apiGroups: ["`+k.GVK.Group+`"]`) && strings.Contains(l, `"get", "list", "watch"`) {
				line = l
			}
		}
		if !strings.Contains(line, `"`+k.Resource+`"`) {
			t.Errorf("no rule grants %s (%s/%s): %s", k.Kind, k.GVK.Group, k.Resource, r)
		}
	}
	if !strings.Contains(r, "  - apiGroups: [\"\"]\n    resources: [\"pods/log\"]\n    verbs: [\"get\"]\n") {
		t.Errorf("pods/log is not granted get alone:\n%s", r)
	}
}

func TestWithRulesKeepsTheRest(t *testing.T) {
	in := "a: 1\n---\n# the role\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nrules:\n  - old\n---\nkind: ClusterRoleBinding\nroleRef:\n  kind: ClusterRole\n"
	got, err := withRules([]byte(in), []byte("rules:\n  - new\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "  - old\n", "  - new\n", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for bad, why := range map[string]string{
		"a: 1\nroleRef:\n  kind: ClusterRole\n":                             "no ClusterRole",
		"kind: ClusterRole\nrules:\n---\nx: 1\nkind: ClusterRole\nrules:\n": "more than one ClusterRole",
		"x: 1\n---\nkind: ClusterRole\n":                                    "the ClusterRole has no rules",
	} {
		if _, err := withRules([]byte(bad), nil); err == nil || err.Error() != why {
			t.Errorf("withRules(%q) = %v, want %s", bad, err, why)
		}
	}
}
