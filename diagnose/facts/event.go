package facts

import "strings"

// EventFailing is the one verdict on an event: every Warning reports a failure, and so does
// the kubelet's Normal "Killing" of a container that failed its liveness or startup probe or
// its postStart hook (the kubelet records the kill as Normal, with "Container c failed
// liveness probe" or the reason "FailedPostStartHook" as its message: kuberuntime_manager.go,
// kuberuntime_container.go).
func EventFailing(eventType, reason, message string) bool {
	return eventType == "Warning" ||
		reason == "Killing" && (strings.Contains(message, "failed liveness probe") || strings.Contains(message, "failed startup probe") ||
			message == "FailedPostStartHook")
}
