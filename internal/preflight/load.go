package preflight

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// listPage is the page size of the lists: big clusters answer in pages, never in one body.
const listPage = 500

// Clients are what Load reads through: typed gets and lists, and a metadata-only reader for
// ConfigMaps and Secrets, whose requests accept PartialObjectMetadata alone so the server
// never sends their data.
type Clients struct {
	Kube     kubernetes.Interface
	Metadata MetadataReader
}

// Load reads what the checks need about the manifests' workloads, with get and list requests
// only. An API error (forbidden, not found) becomes an Unread fact the checks report; a
// failure to reach the server at all is returned.
func Load(ctx context.Context, c Clients, m *Manifests, checkReferences bool) (*Facts, error) {
	f := &Facts{Namespaces: map[string]*NamespaceFacts{}, CheckReferences: checkReferences}
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	switch reason, err := unread(err); {
	case err != nil:
		return nil, fmt.Errorf("list nodes: %w", err)
	case reason != "":
		f.NodesUnread = reason
	default:
		for i := range nodes.Items {
			f.Nodes = append(f.Nodes, &nodes.Items[i])
		}
	}
	if f.NodesUnread == "" {
		pods, reason, err := listPods(ctx, c.Kube, metav1.NamespaceAll, metav1.ListOptions{FieldSelector: "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"})
		if err != nil {
			return nil, fmt.Errorf("list the pods bound to nodes: %w", err)
		}
		f.BoundPods, f.BoundPodsUnread = pods, reason
	}
	carried := m.carried()
	for _, w := range m.Workloads {
		nf := f.Namespaces[w.Namespace]
		if nf == nil {
			if nf, err = loadNamespace(ctx, c, w.Namespace); err != nil {
				return nil, err
			}
			f.Namespaces[w.Namespace] = nf
		}
		if err := loadWorkload(ctx, c, nf, w, checkReferences, carried); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// carried are the ServiceAccounts, ConfigMaps and Secrets the stream creates, by
// "Kind/namespace/name": the checks take them as applied, so the cluster is not asked for them
// (a lookup of a Secret that is not there yet may well be refused).
func (m *Manifests) carried() map[string]bool {
	out := map[string]bool{}
	for _, sa := range m.ServiceAccounts {
		out["ServiceAccount/"+sa.Namespace+"/"+sa.Name] = true
	}
	for _, r := range m.ConfigMaps {
		out["ConfigMap/"+r.Namespace+"/"+r.Name] = true
	}
	for _, r := range m.Secrets {
		out["Secret/"+r.Namespace+"/"+r.Name] = true
	}
	return out
}

// unread turns an API error into the reason a fact is missing; any other error is returned.
func unread(err error) (string, error) {
	if err == nil {
		return "", nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && !errors.Is(err, context.Canceled) {
		return report.Clean(err.Error()), nil
	}
	return "", err
}

func listPods(ctx context.Context, kube kubernetes.Interface, ns string, opts metav1.ListOptions) ([]*corev1.Pod, string, error) {
	var out []*corev1.Pod
	opts.Limit = listPage
	for {
		l, err := kube.CoreV1().Pods(ns).List(ctx, opts)
		if reason, err := unread(err); err != nil || reason != "" {
			return nil, reason, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		if l.Continue == "" {
			return out, "", nil
		}
		opts.Continue = l.Continue
	}
}

func loadNamespace(ctx context.Context, c Clients, ns string) (*NamespaceFacts, error) {
	nf := &NamespaceFacts{
		ServiceAccounts: map[string]bool{}, Live: map[string]*Live{},
		ConfigMaps: map[string]bool{}, Secrets: map[string]bool{}, Unread: map[string]string{},
	}
	n, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch exists, reason, err := lookup(err); {
	case err != nil:
		return nil, fmt.Errorf("get namespace %s: %w", ns, err)
	case exists:
		nf.Namespace = n
	default:
		nf.NamespaceUnread = reason
	}
	quotas, err := c.Kube.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	switch reason, err := unread(err); {
	case err != nil:
		return nil, fmt.Errorf("list the ResourceQuotas of %s: %w", ns, err)
	case reason != "":
		nf.QuotasUnread = reason
	default:
		for i := range quotas.Items {
			nf.Quotas = append(nf.Quotas, &quotas.Items[i])
		}
		sort.Slice(nf.Quotas, func(i, j int) bool { return nf.Quotas[i].Name < nf.Quotas[j].Name })
	}
	svcs, err := c.Kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	switch reason, err := unread(err); {
	case err != nil:
		return nil, fmt.Errorf("list the Services of %s: %w", ns, err)
	case reason != "":
		nf.ServicesUnread = reason
	default:
		for i := range svcs.Items {
			nf.Services = append(nf.Services, &svcs.Items[i])
		}
		sort.Slice(nf.Services, func(i, j int) bool { return nf.Services[i].Name < nf.Services[j].Name })
	}
	return nf, nil
}

// lookup sorts the answer to a get: found, not found, unreadable (why), or an error that
// stops the run.
func lookup(err error) (exists bool, reason string, fatal error) {
	switch {
	case err == nil:
		return true, "", nil
	case apierrors.IsNotFound(err):
		return false, "", nil
	}
	reason, fatal = unread(err)
	return false, reason, fatal
}

func loadWorkload(ctx context.Context, c Clients, nf *NamespaceFacts, w *Workload, checkReferences bool, carried map[string]bool) error {
	ns := w.Namespace
	sa := w.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = w.Template.Spec.DeprecatedServiceAccount
	}
	if sa == "" {
		sa = "default"
	}
	if _, seen := nf.ServiceAccounts[sa]; !seen && nf.Unread["serviceaccount/"+sa] == "" && !carried["ServiceAccount/"+ns+"/"+sa] {
		_, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
		if err := found(err, nf, "serviceaccount/"+sa, func(ok bool) { nf.ServiceAccounts[sa] = ok }); err != nil {
			return fmt.Errorf("get ServiceAccount %s/%s: %w", ns, sa, err)
		}
	}
	live := &Live{}
	nf.Live[Key(w.Kind, w.Name)] = live
	var obj any
	var sel *metav1.LabelSelector
	var err error
	switch w.Kind {
	case "Deployment":
		var d *appsv1.Deployment
		if d, err = c.Kube.AppsV1().Deployments(ns).Get(ctx, w.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	case "StatefulSet":
		var s *appsv1.StatefulSet
		if s, err = c.Kube.AppsV1().StatefulSets(ns).Get(ctx, w.Name, metav1.GetOptions{}); err == nil {
			obj, sel = s, s.Spec.Selector
		}
	case "DaemonSet":
		var d *appsv1.DaemonSet
		if d, err = c.Kube.AppsV1().DaemonSets(ns).Get(ctx, w.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	}
	switch exists, reason, err := lookup(err); {
	case err != nil:
		return fmt.Errorf("get %s %s/%s: %w", w.Kind, ns, w.Name, err)
	case !exists:
		// Not found: the manifest creates it; unreadable: the checks that need it say why.
		live.Unread = reason
		return refs(ctx, c, nf, w, checkReferences, carried)
	}
	live.Object = obj
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && sel != nil {
		pods, reason, err := listPods(ctx, c.Kube, ns, metav1.ListOptions{LabelSelector: s.String()})
		if err != nil {
			return fmt.Errorf("list the pods of %s %s/%s: %w", w.Kind, ns, w.Name, err)
		}
		live.Pods, live.Unread = pods, reason
	}
	return refs(ctx, c, nf, w, checkReferences, carried)
}

// found records whether a get found its object, or why it could not tell.
func found(err error, nf *NamespaceFacts, key string, set func(bool)) error {
	exists, reason, err := lookup(err)
	switch {
	case err != nil:
		return err
	case reason != "":
		nf.Unread[key] = reason
	default:
		set(exists)
	}
	return nil
}

// refs looks up the ConfigMaps and Secrets the template names and the stream does not carry,
// by metadata only: the requests ask for PartialObjectMetadata, so no data is sent.
func refs(ctx context.Context, c Clients, nf *NamespaceFacts, w *Workload, checkReferences bool, carried map[string]bool) error {
	if !checkReferences {
		return nil
	}
	for _, r := range References(w) {
		if carried[r.Kind+"/"+w.Namespace+"/"+r.Name] {
			continue
		}
		set, resource := nf.ConfigMaps, "configmaps"
		if r.Kind == "Secret" {
			set, resource = nf.Secrets, "secrets"
		}
		key := strings.ToLower(r.Kind) + "/" + r.Name
		if _, seen := set[r.Name]; seen || nf.Unread[key] != "" {
			continue
		}
		err := c.Metadata.Get(ctx, resource, w.Namespace, r.Name)
		if err := found(err, nf, key, func(ok bool) { set[r.Name] = ok }); err != nil {
			return fmt.Errorf("look up %s %s/%s: %w", r.Kind, w.Namespace, r.Name, err)
		}
	}
	return nil
}
