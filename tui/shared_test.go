package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// sharedModel is the fixture's console whose report names one shared dependency, its target
// as a hostile log may write it.
func sharedModel(t *testing.T, w, h int) *Model {
	t.Helper()
	snap, rep := fixture()
	rep.SharedDependencies = []diagnose.SharedDependency{{
		Target: "mysql:3306\x1b[31m", Object: "Service/mysql", Namespace: "default",
		Failure:   "dial tcp mysql:3306: connect: connection refused",
		Workloads: []string{"Deployment/default/telemetry-ingester", "Deployment/default/telemetry-collector"},
	}}
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "demo"},
		testStyles(), func() time.Time { return refTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m
}

// TestSharedDependencyIsOneFinding: workloads failing on one dependency are one finding in the
// header, the target named once with how many fail on it; a report without one has none.
func TestSharedDependencyIsOneFinding(t *testing.T) {
	m := sharedModel(t, 200, 20)
	if f := m.data.shared; len(f) != 1 || strings.ContainsRune(f[0], '\x1b') {
		t.Errorf("findings = %q, want one, cleaned of the log's escapes", f)
	}
	v := seen(m)
	header := strings.Split(v, "\n")[1]
	if !strings.Contains(header, "⚑ shared dependency mysql:3306 (Service/mysql): 2 workloads") {
		t.Errorf("header line %q does not name the shared dependency once", header)
	}
	if strings.Count(v, "shared dependency") != 1 {
		t.Errorf("the finding is not said once:\n%s", v)
	}
	if v := seen(readyModel(200, 20)); strings.Contains(v, "shared dependenc") {
		t.Errorf("no shared dependency, yet the console names one:\n%s", v)
	}
}

// A console over several contexts says each context's shared dependencies with its name.
func TestFleetSharedDependenciesNameTheirContext(t *testing.T) {
	one := sharedModel(t, 200, 20).data
	ds := combineFleet([]fleetPart{{context: "one", part: one}, {context: "two", part: datasetOf(fixture())}})
	if len(ds.shared) != 1 || !strings.HasPrefix(ds.shared[0], "one: mysql:3306 (Service/mysql): 2 workloads") {
		t.Errorf("fleet findings = %q", ds.shared)
	}
}

// A registry the members cannot pull from is named as one.
func TestSharedRegistryIsNamedAsOne(t *testing.T) {
	f := sharedFindings(&diagnose.Report{SharedDependencies: []diagnose.SharedDependency{{
		Target: "harbor.corp.example", Pull: true, Workloads: []string{"Deployment/shop/cart", "StatefulSet/shop/cache"},
	}}})
	if len(f) != 1 || f[0] != "registry harbor.corp.example: 2 workloads" {
		t.Errorf("findings = %q, want the registry named once", f)
	}
}
