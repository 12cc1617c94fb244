package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// withShared is the sample report with one shared dependency, its target as a hostile log may
// write it.
func withShared() *diagnose.Report {
	r := sampleReport()
	r.SharedDependencies = []diagnose.SharedDependency{{
		Target: "mysql:3306\x1b[2J", Object: "Service/mysql", Namespace: "shop",
		Failure:   `dial tcp mysql:3306: connect: connection refused`,
		Workloads: []string{"Deployment/shop/cart", "Deployment/shop/orders", "StatefulSet/shop/ledger"},
	}}
	return r
}

// The table says each shared dependency once, after the rows; a table without headers, which
// scripts read row by row, does not; a report without any prints no line of its own.
func TestTableNamesSharedDependencies(t *testing.T) {
	printTable := func(r *diagnose.Report, opts Options) string {
		t.Helper()
		p, err := NewPrinter("table", opts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := p.PrintReport(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain := printTable(sampleReport(), Options{})
	got := printTable(withShared(), Options{})
	const want = "shared dependency mysql:3306 (Service/mysql in shop): 3 workloads fail reaching it at once, victims not causes: " +
		"Deployment/shop/cart, Deployment/shop/orders, StatefulSet/shop/ledger\n"
	if !strings.HasPrefix(got, plain) || got[len(plain):] != "\n"+want {
		t.Errorf("table with a shared dependency:\n%s\nwant the plain table and then a blank line and\n%s", got, want)
	}
	if rows := printTable(withShared(), Options{NoHeaders: true}); strings.Contains(rows, "shared dependency") {
		t.Errorf("--no-headers prints the shared dependency:\n%s", rows)
	}
	if strings.Contains(plain, "shared dependency") {
		t.Errorf("a report without a shared dependency names one:\n%s", plain)
	}
}

// Every workload in one namespace: the line names them without it.
func TestSharedDependencyLineInOneNamespace(t *testing.T) {
	sd := &diagnose.SharedDependency{
		Target: "api.partner.example.com", Workloads: []string{"Deployment/shop/quotes", "Deployment/shop/rates"},
	}
	const want = "shared dependency api.partner.example.com: 2 workloads fail reaching it at once, victims not causes: Deployment/quotes, Deployment/rates"
	if got := SharedDependencyLine(sd, false); got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}

// A shared dependency's JSON keys are the documented ones.
func TestSharedDependencyJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := printReport(&buf, withShared(), "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SharedDependencies []map[string]any `json:"sharedDependencies"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.SharedDependencies) != 1 {
		t.Fatalf("sharedDependencies = %v, want one", doc.SharedDependencies)
	}
	wantKeys(t, "shared dependency", doc.SharedDependencies[0], "target", "object", "namespace", "failure", "workloads")
}

// The markdown audit names each shared dependency once, with its failing line as code.
func TestMarkdownNamesSharedDependencies(t *testing.T) {
	var buf bytes.Buffer
	if err := printReport(&buf, withShared(), "markdown"); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	const want = "## Shared dependencies\n\n- shared dependency mysql:3306 (Service/mysql in shop): 3 workloads fail reaching it at once, victims not causes: " +
		"Deployment/shop/cart, Deployment/shop/orders, StatefulSet/shop/ledger\n  - failing line: `dial tcp mysql:3306: connect: connection refused`\n"
	if strings.Count(md, "Shared dependencies") != 1 || !strings.Contains(md, want) {
		t.Errorf("markdown:\n%s\nwant it to hold once:\n%s", md, want)
	}
	var plain bytes.Buffer
	if err := printReport(&plain, sampleReport(), "markdown"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Shared dependencies") {
		t.Error("a report without a shared dependency has the section")
	}
}

// A registry the members cannot pull from is said as one.
func TestSharedDependencyLineOfARegistry(t *testing.T) {
	sd := &diagnose.SharedDependency{
		Target: "harbor.corp.example", Pull: true, Workloads: []string{"Deployment/shop/checkout-web", "StatefulSet/shop/cart-cache"},
	}
	const want = "shared dependency registry harbor.corp.example: 2 workloads cannot pull their images from it at once, victims not causes: Deployment/checkout-web, StatefulSet/cart-cache"
	if got := SharedDependencyLine(sd, false); got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}
