package metrics

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The annotations a team writes on its workload to say what its output is.
const (
	AnnotationThroughput     = "kubediagnose.dev/throughput"
	AnnotationThroughputUnit = "kubediagnose.dev/throughput-unit"
	AnnotationBacklog        = "kubediagnose.dev/backlog"
	AnnotationBacklogUnit    = "kubediagnose.dev/backlog-unit"
)

// The placeholders a query template may hold; each is replaced before the query is sent.
const (
	// PlaceholderNamespace is the workload's namespace.
	PlaceholderNamespace = "$namespace"
	// PlaceholderWorkload is the workload's name.
	PlaceholderWorkload = "$workload"
	// PlaceholderKind is its kind in lower case: deployment, statefulset, daemonset.
	PlaceholderKind = "$kind"
	// PlaceholderPods is a regular expression matching the names of the workload's copies of
	// every revision, past ones included, for use as pod=~"$pods": <name>-<hash>-<suffix> for
	// a Deployment, <name>-<ordinal> for a StatefulSet, <name>-<suffix> for a DaemonSet.
	PlaceholderPods = "$pods"
)

// Default units.
const (
	defaultThroughputUnit = "/s"
	defaultBacklogUnit    = ""
)

// DefaultQuery is one of the common request counters tried, in order, for a workload with no
// throughput query of its own; the first that returns a series is used.
type DefaultQuery struct {
	Template string
	Unit     string
	// Convention names who writes the counter.
	Convention string
}

// DefaultQueries are the request counters of the common HTTP and gRPC server libraries, by pod.
var DefaultQueries = []DefaultQuery{
	{`sum(rate(http_requests_total{namespace="$namespace",pod=~"$pods"}[2m]))`, "requests/s", "Prometheus client libraries' HTTP middleware"},
	{`sum(rate(http_server_requests_seconds_count{namespace="$namespace",pod=~"$pods"}[2m]))`, "requests/s", "Micrometer (Spring Boot)"},
	{`sum(rate(http_server_request_duration_seconds_count{namespace="$namespace",pod=~"$pods"}[2m]))`, "requests/s", "OpenTelemetry HTTP semantic conventions"},
	{`sum(rate(grpc_server_handled_total{namespace="$namespace",pod=~"$pods"}[2m]))`, "rpcs/s", "go-grpc-prometheus"},
}

// candidate is one query to try for a workload.
type candidate struct {
	role     snapshot.MetricRole
	origin   snapshot.QueryOrigin
	template string
	unit     string
}

// target is a workload and the queries to try for it, per role in order.
type target struct {
	key        snapshot.ObjectKey
	throughput []candidate
	backlog    []candidate
}

// workloadMeta is what choosing a query reads of a workload.
type workloadMeta struct {
	key         snapshot.ObjectKey
	labels      map[string]string
	annotations map[string]string
}

// targets lists the workloads of a snapshot with the queries to try for each.
func targets(s *snapshot.Snapshot, rules []Rule) []target {
	var ws []workloadMeta
	for _, d := range s.Deployments {
		ws = append(ws, workloadMeta{snapshot.ObjectKey{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name}, d.Labels, d.Annotations})
	}
	for _, st := range s.StatefulSets {
		ws = append(ws, workloadMeta{snapshot.ObjectKey{Kind: "StatefulSet", Namespace: st.Namespace, Name: st.Name}, st.Labels, st.Annotations})
	}
	for _, ds := range s.DaemonSets {
		ws = append(ws, workloadMeta{snapshot.ObjectKey{Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}, ds.Labels, ds.Annotations})
	}
	out := make([]target, 0, len(ws))
	for _, w := range ws {
		out = append(out, chooseQueries(w, rules))
	}
	return out
}

// chooseQueries picks, per role, the annotation, else the first matching rule, else (for
// throughput only: no common backlog metric exists) the default list.
func chooseQueries(w workloadMeta, rules []Rule) target {
	t := target{key: w.key}
	var rule *Rule
	for i := range rules {
		r := &rules[i]
		if (r.Namespace == "" || r.Namespace == w.key.Namespace) && r.Selector.Matches(labels.Set(w.labels)) {
			rule = r
			break
		}
	}
	pick := func(role snapshot.MetricRole, annotation, unitAnnotation, ruleQuery, ruleUnit, defUnit string) []candidate {
		if q := strings.TrimSpace(w.annotations[annotation]); q != "" {
			return []candidate{{role, snapshot.OriginAnnotation, q, unitOr(w.annotations[unitAnnotation], defUnit)}}
		}
		if rule != nil && ruleQuery != "" {
			return []candidate{{role, snapshot.OriginConfig, ruleQuery, unitOr(ruleUnit, defUnit)}}
		}
		return nil
	}
	var rt, rtu, rb, rbu string
	if rule != nil {
		rt, rtu, rb, rbu = rule.Throughput, rule.ThroughputUnit, rule.Backlog, rule.BacklogUnit
	}
	t.throughput = pick(snapshot.RoleThroughput, AnnotationThroughput, AnnotationThroughputUnit, rt, rtu, defaultThroughputUnit)
	if t.throughput == nil {
		for _, d := range DefaultQueries {
			t.throughput = append(t.throughput, candidate{snapshot.RoleThroughput, snapshot.OriginDefault, d.Template, d.Unit})
		}
	}
	t.backlog = pick(snapshot.RoleBacklog, AnnotationBacklog, AnnotationBacklogUnit, rb, rbu, defaultBacklogUnit)
	return t
}

func unitOr(u, def string) string {
	if u = strings.TrimSpace(u); u != "" {
		return u
	}
	return def
}

// Expand fills a template's placeholders for one workload.
func Expand(template string, w snapshot.ObjectKey) string {
	return strings.NewReplacer(
		PlaceholderNamespace, w.Namespace,
		PlaceholderWorkload, w.Name,
		PlaceholderKind, strings.ToLower(w.Kind),
		PlaceholderPods, podsPattern(w),
	).Replace(template)
}

// podsPattern is the $pods regular expression, written for a PromQL double-quoted string (so
// its backslashes are doubled). PromQL anchors =~ at both ends. The segments after the name are
// the ones the controllers generate, in the API server's alphabet for generated names (no
// vowels, no 0, 1 or 3; k8s.io/apimachinery/pkg/util/rand): a pod-template-hash of 6 to 10
// characters (a uint32 in decimal, shorter for one hash in 40,000) and a 5-character suffix.
// So a Deployment named web matches neither the copies of one named web-api nor those of a
// DaemonSet named web-agent.
func podsPattern(w snapshot.ObjectKey) string {
	name := strings.ReplaceAll(regexp.QuoteMeta(w.Name), `\`, `\\`)
	const generated = "[bcdfghjklmnpqrstvwxz2456789]"
	switch w.Kind {
	case "Deployment":
		return name + "-" + generated + "{6,10}-" + generated + "{5}"
	case "StatefulSet":
		return name + "-[0-9]+"
	default:
		return name + "-" + generated + "{5}"
	}
}
