package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSelectorsAreAppliedByTheServer runs `audit -l` and `--field-selector` against the real API
// server and proves from its audit log that the workload lists carried the selectors, while the
// evidence (pods, replicasets) was listed whole.
func TestSelectorsAreAppliedByTheServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	web := ingester("web", 1, reachableIntake)
	web.Labels["tier"] = "web"
	db := deployment("db-proxy", missingImage, 1, nil)
	db.Labels["tier"] = "db"
	e.create(t, web, false)
	e.create(t, db, false)
	e.waitServing(t, "web", 1)
	e.waitPods(t, "db-proxy", 1, "failing to pull", pullFailing)
	reader := cp.NewIdentity(t, e.ns, readerRules(true))

	r := eventuallyAudit(t, 30*time.Second, reader.Kubeconfig, []string{"-l", "tier=web"}, verdict{name: "web", shape: "healthy"})
	if len(r.Workloads) != 1 {
		t.Errorf("-l tier=web: workloads %s; want web alone (its ReplicaSet follows it, db-proxy's does not show)", verdicts(r))
	}
	r = audit(t, reader.Kubeconfig, "--field-selector", "metadata.name=db-proxy")
	if len(r.Workloads) != 1 || r.find("Deployment", "db-proxy") == nil || r.find("Deployment", "db-proxy").Shape != "never-starts" {
		t.Errorf("--field-selector metadata.name=db-proxy: workloads %s; want db-proxy alone, never-starts", verdicts(r))
	}
	res := diagnoseCmd(t, "audit", "--kubeconfig", reader.Kubeconfig, "-l", "tier=db", "-o", "name")
	if res.code != 0 || res.stdout != "deployment.apps/db-proxy\n" {
		t.Errorf("-l tier=db -o name: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}

	want := map[string]bool{"labelSelector=tier=web": false, "fieldSelector=metadata.name=db-proxy": false, "labelSelector=tier=db": false}
	eventually(t, 15*time.Second, func() string {
		all, err := readAuditLog(cp.AuditLogPath())
		if err != nil {
			return err.Error()
		}
		for _, a := range all {
			if a.User.Username != reader.User || a.Verb != "list" {
				continue
			}
			u, err := url.Parse(a.RequestURI)
			if err != nil {
				return fmt.Sprintf("audit log request %q: %v", a.RequestURI, err)
			}
			q := u.Query()
			sel := ""
			if l := q.Get("labelSelector"); l != "" {
				sel = "labelSelector=" + l
			}
			if f := q.Get("fieldSelector"); f != "" {
				sel = "fieldSelector=" + f
			}
			switch a.ObjectRef.Resource {
			case "deployments", "statefulsets", "daemonsets", "cronjobs":
				if sel == "" {
					t.Errorf("list of %s without a selector: %s", a.ObjectRef.Resource, a.RequestURI)
				}
				if _, ok := want[sel]; ok && a.ObjectRef.Resource == "deployments" {
					want[sel] = true
				}
			default:
				if sel != "" {
					t.Errorf("list of %s with %s: evidence is listed whole: %s", a.ObjectRef.Resource, sel, a.RequestURI)
				}
			}
		}
		var missing []string
		for sel, seen := range want {
			if !seen {
				missing = append(missing, sel)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("no list of deployments with %s in the audit log yet", strings.Join(missing, ", "))
		}
		return ""
	})
}
