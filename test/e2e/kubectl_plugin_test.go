package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pluginPath is a PATH on which the real kubectl finds the plugin built from this checkout, and
// nothing else of the project's.
func pluginPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(dir, "kubectl-diagnose")); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + "/usr/bin:/bin"
}

// kubectlDiagnose runs `kubectl diagnose args...` with the real kubectl, which finds the plugin
// on path and execs it, as the admin.
func kubectlDiagnose(t *testing.T, path string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cp.AssetsDir(), "kubectl"), append([]string{"diagnose"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+cp.AdminKubeconfig())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("kubectl diagnose %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// TestKubectlRunsThePluginOnWhatThePagerNames runs the plugin through the real kubectl against
// the real API server, starting from what on-call has: a pod's name (its Deployment through its
// ReplicaSet; a Job's pod, its Job), a ReplicaSet's, and TYPE[/NAME] arguments as kubectl get
// takes them. Hints name the command as typed, `kubectl diagnose`, which kubectl does not say:
// the plugin reads it from the path kubectl ran it by.
func TestKubectlRunsThePluginOnWhatThePagerNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, ingester("ingest", 2, unreachableIntake), false)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "backfill"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "backfill"}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "backfill", Image: missingImage}},
			},
		}},
	}
	if _, err := e.cs.BatchV1().Jobs(e.ns).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods(t, "ingest", 2, "running", running)
	e.waitPods(t, "backfill", 1, "failing to pull", pullFailing)
	podOf := func(app string) corev1.Pod {
		t.Helper()
		l, err := e.cs.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil || len(l.Items) == 0 {
			t.Fatalf("pods of %s: %v", app, err)
		}
		return l.Items[0]
	}
	ingestPod, jobPod := podOf("ingest"), podOf("backfill")
	rs := metav1.GetControllerOf(&ingestPod).Name
	path := pluginPath(t)

	res := kubectlDiagnose(t, path, "explain", "pod/"+ingestPod.Name, "-n", e.ns)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "deployment/ingest in namespace "+e.ns+"\n") ||
		res.stderr != "pod/"+ingestPod.Name+" is controlled by deployment/ingest (through replicaset/"+rs+"); explaining deployment/ingest\n" {
		t.Errorf("kubectl diagnose explain pod/%s: exit %d\nstdout:\n%s\nstderr:\n%s", ingestPod.Name, res.code, res.stdout, res.stderr)
	}

	res = kubectlDiagnose(t, path, "explain", "rs/"+rs, "-n", e.ns, "-o", "json")
	var d workload
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil || res.code != 0 || d.Kind != "Deployment" || d.Name != "ingest" ||
		res.stderr != "replicaset/"+rs+" is controlled by deployment/ingest; explaining deployment/ingest\n" {
		t.Errorf("kubectl diagnose explain rs/%s -o json: exit %d %v %+v\nstderr:\n%s", rs, res.code, err, d, res.stderr)
	}

	res = kubectlDiagnose(t, path, "explain", "pod/"+jobPod.Name, "-n", e.ns, "-o", "markdown")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "# job/backfill in "+e.ns+": ") || !strings.Contains(res.stdout, "\n## Copies\n") ||
		res.stderr != "pod/"+jobPod.Name+" is controlled by job/backfill; explaining job/backfill\n" {
		t.Errorf("kubectl diagnose explain pod/%s -o markdown: exit %d\nstdout:\n%s\nstderr:\n%s", jobPod.Name, res.code, res.stdout, res.stderr)
	}

	// TYPE/NAME and TYPE NAME arguments, a pod among them, as kubectl get takes them.
	res = kubectlDiagnose(t, path, "audit", "deploy/ingest", "pod/"+ingestPod.Name, "job/backfill", "-n", e.ns, "-o", "name")
	if lines := strings.Fields(res.stdout); res.code != 0 || len(lines) != 2 || !slices.Contains(lines, "deployment.apps/ingest") || !slices.Contains(lines, "job.batch/backfill") ||
		!strings.Contains(res.stderr, "pod/"+ingestPod.Name+" is controlled by deployment/ingest") {
		t.Errorf("audit deploy/ingest pod/%s job/backfill: exit %d\nstdout:\n%s\nstderr:\n%s", ingestPod.Name, res.code, res.stdout, res.stderr)
	}
	res = kubectlDiagnose(t, path, "audit", "deployment,job", "-A", "-o", "name")
	if res.code != 0 || !strings.Contains(res.stdout, "deployment.apps/ingest\n") || !strings.Contains(res.stdout, "job.batch/backfill\n") ||
		strings.Contains(res.stdout, "statefulset") || strings.Contains(res.stdout, "daemonset") || strings.Contains(res.stdout, "cronjob") {
		t.Errorf("audit deployment,job -A: exit %d, want the Deployments and Jobs of every namespace and nothing else\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = kubectlDiagnose(t, path, "audit", "deploy", "ingest", "job/backfill", "-n", e.ns)
	if res.code != 2 || !strings.Contains(res.stderr, "arguments in TYPE/NAME form cannot follow or precede a TYPE or NAME") {
		t.Errorf("TYPE NAME mixed with TYPE/NAME: exit %d, stderr %q; want a usage error", res.code, res.stderr)
	}

	res = kubectlDiagnose(t, path, "audit", "deploy/ingest", "deploy/nope", "-n", e.ns)
	if res.code != 1 || !strings.Contains(res.stdout, "deployment/ingest") || !strings.HasSuffix(res.stderr, "error: deployment/nope not found in namespace "+e.ns+"\n") {
		t.Errorf("a name not found: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = kubectlDiagnose(t, path, "explain", "deploy/nope", "-n", e.ns)
	if want := "error: deployment/nope not found in namespace " + e.ns + "; list the workloads with: kubectl diagnose audit -n " + e.ns + "\n"; res.code != 1 || res.stderr != want {
		t.Errorf("the hint names the command as typed: exit %d, stderr %q, want %q", res.code, res.stderr, want)
	}
	res = kubectlDiagnose(t, path, "audti", "-n", e.ns)
	if want := "error: unknown command \"audti\" for \"kubectl diagnose\" (did you mean audit?); see 'kubectl diagnose --help'\n"; res.code != 2 || res.stderr != want {
		t.Errorf("a mistyped command: exit %d, stderr %q, want %q", res.code, res.stderr, want)
	}
}

// TestVerbosityShowsTheAPICalls: -v 6, as kubectl's, logs each request the plugin sends and the
// server's answer to stderr; without it stderr holds nothing of klog's.
func TestVerbosityShowsTheAPICalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, ingester("ingest", 1, reachableIntake), false)
	path := pluginPath(t)
	res := kubectlDiagnose(t, path, "audit", "-n", e.ns, "-v", "6")
	// round_trippers.go's line at level 6: the request and the server's answer.
	request := regexp.MustCompile(`"Response" verb="GET" url="https://127\.0\.0\.1:\d+/apis/apps/v1/namespaces/` + regexp.QuoteMeta(e.ns) + `/deployments\?[^"]*" status="200 OK"`)
	if res.code != 0 || !request.MatchString(res.stderr) {
		t.Errorf("audit -v 6: exit %d, stderr lacks the GET of the deployments and its 200:\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stdout, "round_trippers") || !strings.Contains(res.stdout, "deployment/ingest") {
		t.Errorf("audit -v 6: the table and the log lines are not apart:\n%s", res.stdout)
	}
	res = kubectlDiagnose(t, path, "audit", "-n", e.ns)
	if res.code != 0 || res.stderr != "" {
		t.Errorf("audit without -v: exit %d, stderr %q", res.code, res.stderr)
	}
}
