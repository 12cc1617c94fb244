package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// Images of the batch workloads. The registry has no report-export:4.1.0.
const (
	exportImage    = "registry.sim.example/batch/report-export:4.1.0"
	reconcileImage = "registry.sim.example/batch/ledger-reconcile:2.3.1"
	compactImage   = "registry.sim.example/batch/index-compact:1.8.0"
	billingV1      = "registry.sim.example/batch/billing-run:5.2.0"
	billingV2      = "registry.sim.example/batch/billing-run:5.3.0"
	gcImage        = "registry.sim.example/batch/session-gc:1.0.4"
	warmerImage    = "registry.sim.example/batch/cache-warmer:0.9.0"
)

// fixturesEnv names a directory into which TestBatchWorkloads dumps each scenario's namespace
// as testdata/fixtures/<id>/dump, after its verdict held.
const fixturesEnv = "KUBEDIAGNOSE_BATCH_FIXTURES"

func batchWorld() *kubeletsim.World {
	done := kubeletsim.Program{ExitAfter: 2 * time.Second, Logs: []string{"starting run"}, ExitLogs: []string{"run complete"}}
	billingFails := kubeletsim.Program{
		ExitAfter: time.Second, ExitCode: 1, Logs: []string{"starting billing run"},
		ExitLogs: []string{`level=error msg="load rates" err="open /etc/billing/rates-2027.yaml: no such file or directory"`},
	}
	return kubeletsim.NewWorld().
		SetImage(reconcileImage, kubeletsim.Image{Program: kubeletsim.Program{
			ExitAfter: 2 * time.Second, ExitCode: 1, Logs: []string{"reconciling ledger"},
			ExitLogs: []string{`level=error msg="reconcile failed" err="dial tcp ledger-db.internal:5432: connect: connection refused"`},
		}}).
		SetImage(compactImage, kubeletsim.Image{Program: kubeletsim.Program{Logs: []string{"waiting for index lock"}}}).
		SetImage(billingV1, kubeletsim.Image{Program: done}).
		SetImage(billingV2, kubeletsim.Image{Program: billingFails}).
		SetImage(gcImage, kubeletsim.Image{Program: done}).
		SetImage(warmerImage, kubeletsim.Image{Program: done})
}

// jobSpec is a Job's spec whose one container runs image, as the tests' Jobs are written.
func jobSpec(name, image string, mutate func(*batchv1.JobSpec)) batchv1.JobSpec {
	s := batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](1),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: name, Image: image,
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
					},
				}},
			},
		},
	}
	if mutate != nil {
		mutate(&s)
	}
	return s
}

func cronJob(name, schedule string, spec batchv1.JobSpec, mutate func(*batchv1.CronJobSpec)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule, ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: spec},
		},
	}
	if mutate != nil {
		mutate(&cj.Spec)
	}
	return cj
}

// fixtureNamespace creates a namespace of a fixed name, as the fixtures' dumps name theirs.
func fixtureNamespace(t *testing.T, cs kubernetes.Interface, id string) string {
	t.Helper()
	ns := "fixture-" + id
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	for {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return ns
		} else if !apierrors.IsNotFound(err) || ctx.Err() != nil {
			t.Fatalf("wait for the default ServiceAccount of %s: %v", ns, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kubectl runs the real kubectl as the admin.
func kubectl(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(cp.AssetsDir(), "kubectl"), append([]string{"--kubeconfig", cp.AdminKubeconfig()}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// waitJob waits until the Job has the condition.
func waitJob(t *testing.T, cs kubernetes.Interface, ns, name string, cond batchv1.JobConditionType, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() string {
		j, err := cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return ""
			}
		}
		return fmt.Sprintf("Job %s/%s has no %s condition: %+v", ns, name, cond, j.Status)
	})
}

// TestBatchWorkloads builds Jobs and CronJobs on the control plane (the real job and cronjob
// controllers, the simulated kubelet) and holds `audit -o json` to their verdicts: a Job whose
// image is not there, one whose pods die until backoffLimit, one past activeDeadlineSeconds
// doing nothing, a CronJob whose Jobs fail since its template changed, a suspended CronJob that
// let a run pass, and a healthy one. With KUBEDIAGNOSE_BATCH_FIXTURES set it dumps each
// namespace there, for testdata/fixtures.
func TestBatchWorkloads(t *testing.T) {
	t.Parallel()
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ids := []string{"job-image-pull", "job-backoff", "job-deadline", "cronjob-template-change", "cronjob-suspended", "cronjob-healthy"}
	nss := map[string]string{}
	for _, id := range ids {
		nss[id] = fixtureNamespace(t, cs, id)
	}
	var all []string
	for _, ns := range nss {
		all = append(all, ns)
	}
	sim, err := kubeletsim.New(cp.AdminConfig(), batchWorld(), kubeletsim.Options{
		Nodes: kubeletsim.DefaultNodes("batch", 3), Namespaces: all, TimeScale: timeScale, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()

	createJob := func(id, name string, spec batchv1.JobSpec) {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}, Spec: spec}
		if _, err := cs.BatchV1().Jobs(nss[id]).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createCronJob := func(id string, cj *batchv1.CronJob) {
		if _, err := cs.BatchV1().CronJobs(nss[id]).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Every minute: the controller's first run is at the next minute, the first time the
	// suspended one lets pass.
	created := time.Now()
	createCronJob("cronjob-suspended", cronJob("cache-warmer", "* * * * *", jobSpec("cache-warmer", warmerImage, nil),
		func(s *batchv1.CronJobSpec) { s.Suspend = ptr.To(true) }))
	createCronJob("cronjob-healthy", cronJob("session-gc", "* * * * *", jobSpec("session-gc", gcImage, nil), nil))
	createJob("job-image-pull", "report-export", jobSpec("report-export", exportImage, nil))
	createJob("job-backoff", "ledger-reconcile", jobSpec("ledger-reconcile", reconcileImage, func(s *batchv1.JobSpec) {
		s.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LEDGER_DB_ADDR", Value: "ledger-db.internal:5432"}}
	}))
	createJob("job-deadline", "index-compact", jobSpec("index-compact", compactImage, func(s *batchv1.JobSpec) {
		s.ActiveDeadlineSeconds = ptr.To[int64](10)
	}))
	// A nightly run that never fires during the test; its Jobs are made as on-call makes them,
	// with kubectl create job --from.
	billing := cronJob("nightly-billing", "0 3 * * *", jobSpec("nightly-billing", billingV1, func(s *batchv1.JobSpec) {
		s.BackoffLimit = ptr.To[int32](0)
		s.Template.Spec.Containers[0].Args = []string{"--rates=/etc/billing/rates-2026.yaml"}
	}), func(s *batchv1.CronJobSpec) {
		// The default keeps one failed Job; three show that every run fails the same way.
		s.FailedJobsHistoryLimit = ptr.To[int32](3)
	})
	createCronJob("cronjob-template-change", billing)
	tc := nss["cronjob-template-change"]
	kubectl(t, "create", "job", "nightly-billing-1", "--from=cronjob/nightly-billing", "-n", tc)
	waitJob(t, cs, tc, "nightly-billing-1", batchv1.JobComplete, 60*time.Second)
	// The CronJob controller writes the object as the Job completes (its active list, its last
	// successful time), so the change is retried on a conflict, as kubectl edit would be.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.BatchV1().CronJobs(tc).Get(ctx, "nightly-billing", metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := &cur.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		c.Image, c.Args = billingV2, []string{"--rates=/etc/billing/rates-2027.yaml"}
		_, err = cs.BatchV1().CronJobs(tc).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nightly-billing-2", "nightly-billing-3"} {
		kubectl(t, "create", "job", name, "--from=cronjob/nightly-billing", "-n", tc)
		waitJob(t, cs, tc, name, batchv1.JobFailed, 60*time.Second)
	}

	cases := []struct {
		id   string
		want verdict
		// check looks further into the workload's diagnosis.
		check func(t *testing.T, w *workload)
	}{
		{"job-image-pull", verdict{
			kind: "Job", name: "report-export", shape: "never-starts", cause: "spec",
			suspect: "spec.template.spec.containers[0].image",
		}, nil},
		{"job-backoff", verdict{
			kind: "Job", name: "ledger-reconcile", shape: "starts-and-dies",
			suspect: "spec.template.spec.containers[0].env[0].value",
		}, func(t *testing.T, w *workload) {
			if !hasEvidence(w, "BackoffLimitExceeded") {
				t.Errorf("no BackoffLimitExceeded evidence:\n%s", w)
			}
			// One short form of the suspect: the table names the env var as the console does.
			if s := w.Suspects[0]; s.Element != "LEDGER_DB_ADDR" {
				t.Errorf("top suspect's element = %q, want LEDGER_DB_ADDR", s.Element)
			}
			for _, o := range []string{"table", "wide"} {
				res := diagnoseCmd(t, "audit", "--kubeconfig", cp.AdminKubeconfig(), "-n", nss["job-backoff"], "-o", o)
				if res.code != 0 || !strings.Contains(res.stdout, "env LEDGER_DB_ADDR") || strings.Contains(res.stdout, "env[0]   ") {
					t.Errorf("audit -o %s (exit %d) does not name the suspect env LEDGER_DB_ADDR:\n%s", o, res.code, res.stdout)
				}
			}
		}},
		{"job-deadline", verdict{kind: "Job", name: "index-compact", shape: "live-but-idle"}, func(t *testing.T, w *workload) {
			if !hasEvidence(w, "DeadlineExceeded") {
				t.Errorf("no DeadlineExceeded evidence:\n%s", w)
			}
		}},
		{"cronjob-template-change", verdict{
			kind: "CronJob", name: "nightly-billing", shape: "starts-and-dies", cause: "spec",
			suspect: "spec.jobTemplate.spec.template.spec.containers[0].args[0]",
		}, func(t *testing.T, w *workload) {
			if !strings.Contains(w.Headline, "the last 2 Jobs failed") {
				t.Errorf("headline %q does not say both Jobs since the change failed", w.Headline)
			}
			r := w.Revisions
			if r == nil || r.Current != "nightly-billing-3" || r.LastServing != "nightly-billing-1" {
				t.Errorf("revisions = %+v, want current nightly-billing-3, last serving nightly-billing-1", r)
			} else if !contains(r.ChangedPaths, "spec.jobTemplate.spec.template.spec.containers[0].image") {
				t.Errorf("changed paths %v lack the image", r.ChangedPaths)
			}
			if s := w.Suspects[0]; s.PreviousValue != "--rates=/etc/billing/rates-2026.yaml" {
				t.Errorf("top suspect's previous value = %q, want the last succeeded Job's", s.PreviousValue)
			}
		}},
		{"cronjob-suspended", verdict{
			kind: "CronJob", name: "cache-warmer", shape: "suspended", cause: "unknown",
			suspect: "spec.suspend",
		}, func(t *testing.T, w *workload) {
			if w.Suspects[0].Rule != "cronjob-suspended" {
				t.Errorf("top suspect rule = %s, want cronjob-suspended", w.Suspects[0].Rule)
			}
			// An intended state: a CI gate on broken workloads passes it (issue 34 item 12).
			res := diagnoseCmd(t, "audit", "--kubeconfig", cp.AdminKubeconfig(), "-n", w.Namespace, "--fail-on", "broken")
			if res.code != 0 || !strings.Contains(res.stdout, "suspended ") {
				t.Errorf("audit --fail-on broken: exit %d, want 0 with the suspended row\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
		}},
		{"cronjob-healthy", verdict{kind: "CronJob", name: "session-gc", shape: "healthy"}, func(t *testing.T, w *workload) {
			if w.Revisions == nil || w.Revisions.LastServing == "" {
				t.Errorf("revisions = %+v, want the Job that succeeded as last serving", w.Revisions)
			}
		}},
	}
	// The first run falls on the next minute; the suspended CronJob lets it pass.
	firstRun := created.Truncate(time.Minute).Add(time.Minute)
	if wait := time.Until(firstRun.Add(20 * time.Second)); wait > 0 {
		t.Logf("waiting %s for the CronJobs' first scheduled run", wait.Round(time.Second))
		time.Sleep(wait)
	}
	for _, tt := range cases {
		t.Run(tt.id, func(t *testing.T) {
			ns := nss[tt.id]
			r := eventuallyAudit(t, 45*time.Second, cp.AdminKubeconfig(), []string{"-n", ns}, tt.want)
			w := r.find(tt.want.kind, tt.want.name)
			if tt.check != nil {
				tt.check(t, w)
			}
			if len(r.Workloads) != 1 {
				t.Errorf("%d workloads, want only %s/%s: a CronJob's Jobs are its revisions", len(r.Workloads), tt.want.kind, tt.want.name)
			}
			if dir := os.Getenv(fixturesEnv); dir != "" {
				out := filepath.Join(dir, tt.id, "dump")
				if res := diagnoseCmd(t, "dump", "--force", "--kubeconfig", cp.AdminKubeconfig(), "-n", ns, "--output-directory", out); res.code != 0 {
					t.Fatalf("dump: exit %d: %s", res.code, res.stderr)
				}
				t.Logf("dumped %s to %s (reference time %s)", ns, out, r.ReferenceTime.Format(time.RFC3339))
			}
		})
	}
}
