// Package controlplane starts a real Kubernetes control plane for tests: etcd, kube-apiserver and
// kube-controller-manager from the cached e2e assets (`make e2e-assets`, or the directory in
// KUBEDIAGNOSE_ASSETS), on loopback with free ports.
//
// The API server serves TLS with a self-signed certificate, authenticates static bearer tokens
// (an admin in system:masters plus a pool of identities that hold no permissions until a test
// binds them), authorizes with RBAC, signs service-account tokens, and writes an audit log at
// Metadata level. It reaches kubelets by the node's InternalIP and kubeletEndpoint port without
// verifying their certificates, so the simulated kubelet of package kubeletsim can serve pods/log.
// The controller manager runs the deployment, replicaset, statefulset, daemonset, endpointslice,
// garbage-collector, namespace, serviceaccount, serviceaccount-token, root-ca-publisher,
// resourcequota, persistentvolume-binder, job and cronjob controllers (Options.Controllers picks
// others: the fixtures' control plane, test/cmd/controlplane run by hack/fixtures/cluster.sh,
// runs the disruption controller and no volume binder). StopAPIServer and StartAPIServer take
// the API server away and bring it back, for tests of a client that must notice and recover.
// There is no scheduler and no kubelet: package kubeletsim plays both.
//
// Usage, one control plane per test package and a namespace per test:
//
//	var cp *controlplane.ControlPlane
//
//	func TestMain(m *testing.M) {
//		os.Exit(controlplane.RunTests(m, controlplane.Options{}, func(c *controlplane.ControlPlane) { cp = c }))
//	}
//
//	func TestX(t *testing.T) {
//		ns := cp.Namespace(t)              // created now, deleted when the test ends
//		cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
//		id := cp.NewIdentity(t, ns, rules) // a token user bound to a Role with these rules
//		cp.Grant(ctx, id.User, "", nodeRules) // and to a ClusterRole (namespace "")
//		run(cp.Kubectl(), "--kubeconfig", id.Kubeconfig, ...)
//	}
//
// The audit log (AuditLogPath) has one JSON audit.k8s.io/v1 Event per line with user.username,
// verb and objectRef; identities from NewIdentity are named e2e-user-N, the admin e2e-admin, and
// the controllers run as the admin too. Extra flags for either binary go in Options.APIServerArgs
// and Options.ControllerManagerArgs; each binary's output is in Dir()/<binary>.log.
//
// Invariant: every process is started in its own process group and killed with it by Stop, and
// every file lives under one temporary directory that Stop removes; missing assets are an error
// that names the command to run, never a reason to skip.
package controlplane
