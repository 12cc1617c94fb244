// Command genrbac writes the rules of the ClusterRole in deploy/kubectl-diagnose.yaml from
// what the live source reads (internal/live.Resources: the kinds of snapshot.Kinds, whose
// workload kinds are internal/kinds' adapters, and pods/log), one rule per API group in the
// order the source reads them, so adding a kind to the tables grants it. The rest of the file
// is kept as written. Its test fails when the checked-in manifest differs. Run `make docs`.
//
// Usage: genrbac [MANIFEST [OUT]]; OUT defaults to MANIFEST, MANIFEST to
// deploy/kubectl-diagnose.yaml.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
)

func main() {
	in := "deploy/kubectl-diagnose.yaml"
	if len(os.Args) > 1 {
		in = os.Args[1]
	}
	out := in
	if len(os.Args) > 2 {
		out = os.Args[2]
	}
	err := run(in, out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	gen, err := withRules(b, rules(live.Resources()))
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.WriteFile(out, gen, 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// rules renders the resources as the YAML of a ClusterRole's rules: one rule per API group and
// set of verbs, groups in the order they first appear, resources in the order read.
func rules(rs []live.Resource) []byte {
	type rule struct {
		group, verbs string
		resources    []string
	}
	var list []*rule
	for _, r := range rs {
		verbs := `"` + strings.Join(r.Verbs, `", "`) + `"`
		var found *rule
		for _, x := range list {
			if x.group == r.Group && x.verbs == verbs {
				found = x
			}
		}
		if found == nil {
			found = &rule{group: r.Group, verbs: verbs}
			// A rule with other verbs (pods/log, get only) follows its group's first rule.
			at := len(list)
			for i := len(list) - 1; i >= 0; i-- {
				if list[i].group == r.Group {
					at = i + 1
					break
				}
			}
			list = append(list[:at], append([]*rule{found}, list[at:]...)...)
		}
		found.resources = append(found.resources, r.Resource)
	}
	var b bytes.Buffer
	b.WriteString("rules:\n")
	for _, r := range list {
		fmt.Fprintf(&b, "  - apiGroups: [%q]\n    resources: [\"%s\"]\n    verbs: [%s]\n", r.group, strings.Join(r.resources, `", "`), r.verbs)
	}
	return b.Bytes()
}

// withRules returns the manifest with the rules of its one ClusterRole replaced: from the line
// "rules:" of the ClusterRole's document to the document's end.
func withRules(manifest, rules []byte) ([]byte, error) {
	docs := bytes.SplitAfter(manifest, []byte("\n---\n"))
	done := false
	for i, doc := range docs {
		// A line of its own: a binding's roleRef names the kind indented.
		if !bytes.HasPrefix(doc, []byte("kind: ClusterRole\n")) && !bytes.Contains(doc, []byte("\nkind: ClusterRole\n")) {
			continue
		}
		if done {
			return nil, errors.New("more than one ClusterRole")
		}
		start := bytes.Index(doc, []byte("\nrules:\n"))
		if start < 0 {
			return nil, errors.New("the ClusterRole has no rules")
		}
		end := len(doc)
		if bytes.HasSuffix(doc, []byte("---\n")) {
			end -= len("---\n")
		}
		docs[i] = bytes.Join([][]byte{doc[:start+1], rules, doc[end:]}, nil)
		done = true
	}
	if !done {
		return nil, errors.New("no ClusterRole")
	}
	return bytes.Join(docs, nil), nil
}
