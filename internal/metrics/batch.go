package metrics

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// batchSize bounds the workloads of one batched query, so its pod expression stays a size
// the server parses quickly and a POST body carries easily.
const batchSize = 200

// The matchers a template must hold, as written, to be batched.
const (
	namespaceMatcher = `namespace="$namespace"`
	podsMatcher      = `pod=~"$pods"`
)

// batchable reports whether one query can answer a template for many workloads at once: a
// sum(...) whose only placeholders are the namespace and pods matchers. Its per-workload
// answer is then the batched query's series of that namespace whose pod matches, summed.
func batchable(template string) bool {
	t := strings.TrimSpace(template)
	if !strings.HasPrefix(t, "sum(") || !strings.HasSuffix(t, ")") || !balanced(t[len("sum("):len(t)-1]) {
		return false
	}
	rest := strings.ReplaceAll(strings.ReplaceAll(t, namespaceMatcher, ""), podsMatcher, "")
	return strings.Contains(t, namespaceMatcher) && strings.Contains(t, podsMatcher) && !strings.Contains(rest, "$")
}

// balanced reports whether s's parentheses pair up, so sum( and the final ) enclose all of it.
func balanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// batchQuery writes the one query for a batch: sum by (namespace, pod) over the union of the
// workloads' namespaces and pod patterns.
func batchQuery(template string, ws []snapshot.ObjectKey) string {
	nsSet := map[string]bool{}
	var pods []string
	for _, w := range ws {
		nsSet[w.Namespace] = true
		pods = append(pods, podsPattern(w))
	}
	nss := make([]string, 0, len(nsSet))
	for ns := range nsSet {
		nss = append(nss, regexp.QuoteMeta(ns))
	}
	sort.Strings(nss)
	sort.Strings(pods)
	t := strings.TrimSpace(template)
	inner := t[len("sum(") : len(t)-1]
	inner = strings.NewReplacer(
		namespaceMatcher, `namespace=~"`+strings.ReplaceAll(strings.Join(nss, "|"), `\`, `\\`)+`"`,
		podsMatcher, `pod=~"`+strings.Join(pods, "|")+`"`,
	).Replace(inner)
	return "sum by (namespace, pod) (" + inner + ")"
}

// splitBatch hands each workload the series of its namespace whose pod its pattern matches,
// as the API wrote them; a workload with none is absent. A pod's owner name is its name less
// the suffixes its kind adds, so each series is looked up, not tested against every pattern.
func splitBatch(raw json.RawMessage, ws []snapshot.ObjectKey) (map[snapshot.ObjectKey]json.RawMessage, error) {
	var m model.Matrix
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("read range result: %w", err)
	}
	type owner struct{ namespace, name string }
	byOwner := map[owner][]snapshot.ObjectKey{}
	res := map[snapshot.ObjectKey]*regexp.Regexp{}
	for _, w := range ws {
		byOwner[owner{w.Namespace, w.Name}] = append(byOwner[owner{w.Namespace, w.Name}], w)
		// The pattern is written for a PromQL string: undo its doubled backslashes.
		re, err := regexp.Compile("^(?:" + strings.ReplaceAll(podsPattern(w), `\\`, `\`) + ")$")
		if err != nil {
			return nil, fmt.Errorf("pods pattern of %s/%s: %w", w.Kind, w.Name, err)
		}
		res[w] = re
	}
	mine := map[snapshot.ObjectKey]model.Matrix{}
	for _, ss := range m {
		ns, pod := string(ss.Metric["namespace"]), string(ss.Metric["pod"])
		// A Deployment's copies add two segments, the other kinds one.
		for _, name := range []string{trimSegments(pod, 1), trimSegments(pod, 2)} {
			for _, w := range byOwner[owner{ns, name}] {
				if res[w].MatchString(pod) {
					mine[w] = append(mine[w], ss)
				}
			}
		}
	}
	out := map[snapshot.ObjectKey]json.RawMessage{}
	for w, ms := range mine {
		b, err := json.Marshal(ms)
		if err != nil {
			return nil, fmt.Errorf("split range result: %w", err)
		}
		out[w] = b
	}
	return out, nil
}

// trimSegments drops the last n '-'-separated segments of s; "" when it has too few.
func trimSegments(s string, n int) string {
	for range n {
		i := strings.LastIndexByte(s, '-')
		if i < 0 {
			return ""
		}
		s = s[:i]
	}
	return s
}
