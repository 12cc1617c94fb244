package preflight

import (
	corev1 "k8s.io/api/core/v1"
)

// Ref names a namespaced object.
type Ref struct {
	Namespace, Name string
}

// Facts is what the checks read of the cluster: the small read model a loader fills with get
// and list requests (Load) and unit tests fill by hand. An Unread field holds why a fact could
// not be read ("forbidden: ..."); the checks that need it then say so instead of passing.
type Facts struct {
	// Nodes are every node of the cluster.
	Nodes       []*corev1.Node
	NodesUnread string
	// BoundPods are the pods bound to a node and not finished, of every namespace: what the
	// node-fit check subtracts from allocatable. With BoundPodsUnread set, requests are
	// compared with allocatable alone.
	BoundPods       []*corev1.Pod
	BoundPodsUnread string
	// Namespaces holds the facts of each namespace a workload is in.
	Namespaces map[string]*NamespaceFacts
	// CheckReferences says ConfigMaps and Secrets were looked up (by metadata only).
	CheckReferences bool
}

// NamespaceFacts are the facts of one namespace.
type NamespaceFacts struct {
	// Namespace is nil when it does not exist (and Unread is empty) or could not be read.
	Namespace       *corev1.Namespace
	NamespaceUnread string
	// ServiceAccounts are the names looked up: true when the account exists.
	ServiceAccounts map[string]bool
	// Quotas are the namespace's ResourceQuotas.
	Quotas       []*corev1.ResourceQuota
	QuotasUnread string
	// Services are the namespace's Services.
	Services       []*corev1.Service
	ServicesUnread string
	// Live holds the live workloads of the same kind and name as a manifest's, by Key.
	Live map[string]*Live
	// ConfigMaps and Secrets are the names looked up (with CheckReferences): true when the
	// object exists. Only metadata is read.
	ConfigMaps, Secrets map[string]bool
	// Unread says why a looked-up object could not be read, by "kind/name"
	// (serviceaccount/default, secret/db).
	Unread map[string]string
}

// Live is the live counterpart of a manifest: the object as the cluster holds it and its
// copies today.
type Live struct {
	// Object is the live *appsv1.Deployment, *appsv1.StatefulSet or *appsv1.DaemonSet; nil when
	// the cluster holds none (the manifest creates it).
	Object any
	// Unread says why the live object or its copies could not be read.
	Unread string
	// Pods are the copies its selector selects today.
	Pods []*corev1.Pod
}

// Key is how Live is indexed: "Deployment/api".
func Key(kind, name string) string { return kind + "/" + name }

// namespace returns the facts of ns, never nil.
func (f *Facts) namespace(ns string) *NamespaceFacts {
	if nf, ok := f.Namespaces[ns]; ok && nf != nil {
		return nf
	}
	return &NamespaceFacts{NamespaceUnread: "not read"}
}
