package facts

import corev1 "k8s.io/api/core/v1"

// What a pod, a selector and a port say, read one way for the engine and the suspect rules.

// PodActive is the controllers' own notion of an existing copy: not terminating and not finished.
// A pod being deleted or one that Succeeded/Failed (evicted, completed) no longer counts toward
// the declared count, so it does not count here either; it still appears in the copy list.
func PodActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// SameProtocol compares two port protocols, the API's default (TCP) standing for unset.
func SameProtocol(a, b corev1.Protocol) bool {
	if a == "" {
		a = corev1.ProtocolTCP
	}
	if b == "" {
		b = corev1.ProtocolTCP
	}
	return a == b
}

// SetSelects reports whether a Service's selector (a set of key=value pairs, not empty)
// matches labels: what labels.SelectorFromSet(selector).Matches(labels) answers, without
// building a selector per Service and workload.
func SetSelects(selector, lbls map[string]string) bool {
	for k, v := range selector {
		if got, ok := lbls[k]; !ok || got != v {
			return false
		}
	}
	return true
}
