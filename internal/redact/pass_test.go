package redact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
)

func secretSnapshot(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := dump.Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// everything is the report as JSON and every diagnosis in full (explain), changes included.
func everything(t *testing.T, rep *diagnose.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(rep); err != nil {
		t.Fatal(err)
	}
	for i := range rep.Workloads {
		if err := report.PrintExplain(&b, &rep.Workloads[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func leaked(out string) []string {
	var found []string
	for _, s := range secretdump.Secrets {
		if strings.Contains(out, s) {
			found = append(found, s)
		}
	}
	return found
}

func TestReportHidesTheCredentialsOfADump(t *testing.T) {
	s := secretSnapshot(t)
	rep := diagnose.Diagnose(s)
	before := everything(t, rep)
	if got := leaked(before); len(got) < 3 {
		t.Fatalf("the engine's own report shows only %v of the dump's credentials: the test proves nothing", got)
	}
	r := withKey([]byte("test"))
	red := r.Report(rep, s)
	if got := leaked(everything(t, red)); len(got) > 0 {
		t.Errorf("the redacted report shows %v", got)
	}
	if everything(t, rep) != before {
		t.Error("the pass changed the report it was given")
	}
	if again := r.Report(red, s); !reflect.DeepEqual(again, red) {
		t.Error("the pass over its own output changed it")
	}

	// The engine compared the real values: the changed password is still a suspect, and its
	// two revisions read as two different marks, the same ones the diff shows.
	d := red.Find(secretdump.Kind, secretdump.Namespace, secretdump.Name)
	raw := rep.Find(secretdump.Kind, secretdump.Namespace, secretdump.Name)
	if len(d.Suspects) != len(raw.Suspects) || d.Suspects[0].Path.String() != raw.Suspects[0].Path.String() {
		t.Fatalf("suspects changed: %v", d.Suspects)
	}
	var password *diagnose.Suspect
	for i := range d.Suspects {
		if d.Suspects[i].Value == r.Mark(secretdump.PasswordRev2) {
			password = &d.Suspects[i]
		}
	}
	if password == nil || password.PreviousValue != r.Mark(secretdump.PasswordRev1) {
		t.Fatalf("no suspect reads [redacted] -> [redacted] for the changed password: %+v", d.Suspects)
	}
	found := false
	for _, c := range d.Detail.Changes {
		if c.Path.String() == password.Path.String() {
			found = c.Previous == password.PreviousValue && c.Current == password.Value
		}
	}
	if !found {
		t.Errorf("the diff does not show the password's change with the suspect's marks: %+v", d.Detail.Changes)
	}
	// A value the rules do not touch is shown as the engine wrote it.
	if d.Suspects[0].Value != raw.Suspects[0].Value || d.Suspects[0].Value != "telemetry-intake.internal:9443" {
		t.Errorf("top suspect %q, want the endpoint as it is", d.Suspects[0].Value)
	}
}

func TestNilRedactorReturnsTheReportItself(t *testing.T) {
	s := secretSnapshot(t)
	rep := diagnose.Diagnose(s)
	var r *Redactor
	if r.Report(rep, s) != rep {
		t.Error("a nil Redactor copied the report")
	}
}

func TestScopeHidesTheRawDataOfAWorkload(t *testing.T) {
	s := secretSnapshot(t)
	r := withKey([]byte("test"))
	sc := r.Scope(s, secretdump.Kind, secretdump.Namespace, secretdump.Name)
	tmpl := &s.Deployments[0].Spec.Template
	red := sc.Template(tmpl)
	c := red.Spec.Containers[0]
	text, err := json.Marshal(red)
	if err != nil {
		t.Fatal(err)
	}
	if got := leaked(string(text)); len(got) > 0 {
		t.Errorf("the template shows %v:\n%s", got, text)
	}
	if c.Env[0].Value != "telemetry-intake.internal:9443" {
		t.Errorf("INGEST_ENDPOINT = %q, want it shown", c.Env[0].Value)
	}
	if raw, _ := json.Marshal(tmpl); len(leaked(string(raw))) == 0 {
		t.Error("Template changed the snapshot's template")
	}
	var lines []string
	for _, l := range s.Logs {
		lines = append(lines, l.Lines...)
	}
	if got := leaked(strings.Join(lines, "\n")); len(got) == 0 {
		t.Fatal("the dump's logs hold no credential: the test proves nothing")
	}
	if got := leaked(strings.Join(sc.Lines(lines), "\n")); len(got) > 0 {
		t.Errorf("the log lines show %v", got)
	}
	var nilScope *Scope
	if nilScope.Template(tmpl) != tmpl || nilScope.Text("password=x") != "password=x" {
		t.Error("a nil Scope hides something")
	}
}

// The console diagnoses a watch's snapshots with Rediagnose from its last (redacted) report:
// the diagnoses it keeps are redacted already and are not passed again; those it makes anew are.
func TestReportAfterPassesWhatRediagnoseMadeAnew(t *testing.T) {
	s := secretSnapshot(t)
	r := withKey([]byte("test"))
	prev := r.Report(diagnose.Diagnose(s), s)
	key := func(d *diagnose.Diagnosis) bool {
		return d.Kind == secretdump.Kind && d.Namespace == secretdump.Namespace && d.Name == secretdump.Name
	}

	kept := diagnose.Rediagnose(prev, s, func(string, string, string) bool { return false })
	after := r.ReportAfter(prev, kept, s)
	if got := leaked(everything(t, after)); len(got) > 0 {
		t.Errorf("kept diagnoses show %v", got)
	}
	for i := range after.Workloads {
		if d := &after.Workloads[i]; key(d) && !sameArray(d.Suspects, prev.Find(d.Kind, d.Namespace, d.Name).Suspects) {
			t.Error("a kept diagnosis was passed again: its suspects were copied")
		}
	}

	anew := diagnose.Rediagnose(prev, s, func(kind, _, name string) bool { return kind == secretdump.Kind && name == secretdump.Name })
	if got := leaked(everything(t, anew)); len(got) == 0 {
		t.Fatal("the workload diagnosed anew shows no credential before the pass: the test proves nothing")
	}
	if got := leaked(everything(t, r.ReportAfter(prev, anew, s))); len(got) > 0 {
		t.Errorf("a diagnosis made anew shows %v after ReportAfter", got)
	}
}

// TestWaiverReasonIsRedacted: a waiver's reason is the annotation's text, written by anyone who
// may edit the workload; a credential in it is hidden as in any other text, what it waives kept.
func TestWaiverReasonIsRedacted(t *testing.T) {
	s := secretSnapshot(t)
	rep := diagnose.Diagnose(s)
	d := rep.Find(secretdump.Kind, secretdump.Namespace, secretdump.Name)
	d.Waived = &diagnose.Waiver{What: string(d.Shape), Reason: "migrating; see postgres://app:hunter2@db:5432/orders"}
	r := withKey([]byte("test"))
	red := r.Report(rep, s).Find(secretdump.Kind, secretdump.Namespace, secretdump.Name)
	want := diagnose.Waiver{What: string(d.Shape), Reason: "migrating; see postgres://app:" + r.Mark("hunter2") + "@db:5432/orders"}
	if red.Waived == nil || *red.Waived != want {
		t.Errorf("waived = %+v, want %+v", red.Waived, want)
	}
	if d.Waived.Reason != "migrating; see postgres://app:hunter2@db:5432/orders" {
		t.Errorf("the pass changed the report it was given: %q", d.Waived.Reason)
	}
}

// A shared dependency's failing line is a log line like any other: a connection string's
// password in it is marked, and the report given is left as it was.
func TestSharedDependencyFailureIsRedacted(t *testing.T) {
	const line = `dial failed: postgres://ledger:hunter2-not-a-real-one@pg.shop.svc:5432/ledger: connection refused`
	rep := &diagnose.Report{SharedDependencies: []diagnose.SharedDependency{{
		Target: "pg:5432", Object: "Service/pg", Namespace: "shop", Failure: line,
		Workloads: []string{"Deployment/shop/a", "Deployment/shop/b"},
	}}}
	red := withKey([]byte("test")).Report(rep, nil)
	if f := red.SharedDependencies[0].Failure; strings.Contains(f, "hunter2") || !strings.Contains(f, "pg.shop.svc:5432") {
		t.Errorf("failure = %q, want the password marked and the rest kept", f)
	}
	if rep.SharedDependencies[0].Failure != line {
		t.Error("the pass changed the report it was given")
	}
}
