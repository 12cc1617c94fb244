package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/preflight"
)

var readVerbs = []string{"get", "list", "watch"}

// readerRules grant get, list and watch on exactly the kinds the tool reads, in one namespace.
// A namespaced Role cannot grant nodes or persistent volumes; the report must say it could not
// see them.
func readerRules(withEvents bool) []rbacv1.PolicyRule {
	core := []string{"pods", "pods/log", "services", "persistentvolumeclaims", "resourcequotas"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets", "replicasets", "controllerrevisions"}, Verbs: readVerbs},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: readVerbs},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readVerbs},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: readVerbs},
	}
	if withEvents {
		core = append(core, "events")
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: readVerbs})
	}
	return append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: core, Verbs: readVerbs})
}

// TestLeastPrivilege runs the tool as two narrow identities and proves from the API server's
// audit log that it only ever read.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, deployment("pull", missingImage, 1, nil), false)
	e.create(t, ingester("api", 1, reachableIntake), true)
	e.waitServing(t, "api", 1)
	e.waitPods(t, "pull", 1, "failing to pull", pullFailing)

	reader := cp.NewIdentity(t, e.ns, readerRules(true))
	blind := cp.NewIdentity(t, e.ns, readerRules(false))
	want := []verdict{{name: "api", shape: "healthy"}, {name: "pull", shape: "never-starts"}}

	t.Run("a namespaced reader audits its namespace", func(t *testing.T) {
		// No -n: the namespace comes from the kubeconfig context, as it does for kubectl.
		r := eventuallyAudit(t, 30*time.Second, reader.Kubeconfig, nil, want...)
		for _, v := range r.Visibility {
			if v.Kind != "Node" && v.Kind != "PersistentVolume" {
				t.Errorf("visibility %+v: the reader may read everything but nodes and persistent volumes", v)
			}
		}
		if !hasVisibility(r, "Node", "") || !hasVisibility(r, "PersistentVolume", "") {
			t.Errorf("visibility %+v does not say nodes and persistent volumes were not readable", r.Visibility)
		}
		// KUBECONFIG works as it does for kubectl.
		res := diagnoseEnv(t, reader.Kubeconfig, "audit", "-o", "json")
		if res.code != 0 {
			t.Fatalf("audit with KUBECONFIG: exit %d: %s", res.code, res.stderr)
		}
		viaEnv, err := decodeReport(res.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if d := (verdict{name: "pull", shape: "never-starts"}).check(viaEnv); d != "" {
			t.Errorf("audit with KUBECONFIG: %s", d)
		}
	})

	t.Run("without events and nodes the report says what it could not see", func(t *testing.T) {
		r := eventuallyAudit(t, 30*time.Second, blind.Kubeconfig, nil, want...)
		if !hasVisibility(r, "Event", e.ns) || !hasVisibility(r, "Node", "") || !hasVisibility(r, "PersistentVolume", "") {
			t.Errorf("visibility = %+v, want entries for Event in %s, Node and PersistentVolume", r.Visibility, e.ns)
		}
		for _, v := range r.Visibility {
			if v.Kind == "Event" && !strings.Contains(v.Reason, "forbidden") {
				t.Errorf("Event visibility reason %q does not say forbidden", v.Reason)
			}
		}
	})

	t.Run("the audit log shows only get, list and watch, and no secrets", func(t *testing.T) {
		users := map[string]bool{reader.User: true, blind.User: true}
		var entries []auditEntry
		eventually(t, 15*time.Second, func() string {
			all, err := readAuditLog(cp.AuditLogPath())
			if err != nil {
				return err.Error()
			}
			entries = entries[:0]
			seen := map[string]bool{}
			for _, a := range all {
				if users[a.User.Username] || strings.HasPrefix(a.UserAgent, "kubectl-diagnose") {
					entries = append(entries, a)
					seen[a.User.Username] = true
				}
			}
			if !seen[reader.User] || !seen[blind.User] {
				return fmt.Sprintf("the audit log has no requests of %s and %s yet", reader.User, blind.User)
			}
			return ""
		})
		listsPods := false
		for _, a := range entries {
			what := fmt.Sprintf("%s %s %s (user %s, agent %q)", a.Verb, a.ObjectRef.Resource, a.RequestURI, a.User.Username, a.UserAgent)
			if !contains(readVerbs, a.Verb) && !isReview(a) {
				t.Errorf("the tool wrote: %s", what)
			}
			// preflight --check-references gets ConfigMaps and Secrets by metadata, under its own
			// agent; TestPreflight proves no data crosses. Any other touch is a leak.
			metadataGet := a.Verb == "get" && strings.HasSuffix(a.UserAgent, preflight.MetadataUserAgent)
			if (a.ObjectRef.Resource == "secrets" || a.ObjectRef.Resource == "configmaps") && !metadataGet {
				t.Errorf("the tool touched %s: %s", a.ObjectRef.Resource, what)
			}
			if a.User.Username == reader.User && a.Verb == "list" && a.ObjectRef.Resource == "pods" {
				listsPods = true
			}
		}
		if !listsPods {
			t.Errorf("no list of pods by %s among %d requests: is the audit log read right?", reader.User, len(entries))
		}
	})
}

// isReview is serve asking the API server who a caller is and what it may do, as
// kube-rbac-proxy does: a create on a review resource is a question, stored nowhere.
func isReview(a auditEntry) bool {
	if a.Verb != "create" {
		return false
	}
	switch a.ObjectRef.APIGroup + "/" + a.ObjectRef.Resource {
	case "authentication.k8s.io/tokenreviews", "authorization.k8s.io/subjectaccessreviews":
		return true
	}
	return false
}

func hasVisibility(r *report, kind, namespace string) bool {
	for _, v := range r.Visibility {
		if v.Kind == kind && v.Namespace == namespace {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// auditEntry is the part of an audit.k8s.io/v1 Event the test reads.
type auditEntry struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
}

func readAuditLog(path string) ([]auditEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	var out []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var a auditEntry
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			// The API server may be writing the last line right now.
			continue
		}
		out = append(out, a)
	}
	return out, sc.Err()
}
