package facts

import "strings"

// ReadEvent is the one verdict on an event: every Warning reports a failure, and so does the
// kubelet's Normal "Killing" of a container that failed its liveness or startup probe or its
// postStart hook (the kubelet records the kill as Normal, with "Container c failed liveness
// probe" or the reason "FailedPostStartHook" as its message: kuberuntime_manager.go,
// kuberuntime_container.go). The key is the reason and the message without its variable parts.
func ReadEvent(eventType, reason, message string) Signal {
	if !EventFailing(eventType, reason, message) {
		return Signal{}
	}
	sev := SeverityWarning
	if eventType == "Warning" && (reason == "Failed" || strings.HasPrefix(reason, "Failed") || reason == "BackOff") {
		sev = SeverityError
	}
	return Signal{Failing: true, Severity: sev, Class: ClassOf(message), Key: Key(reason + " " + message), Text: message}
}

// EventFailing is ReadEvent's verdict alone, for readers that need no more of it: it builds
// no key.
func EventFailing(eventType, reason, message string) bool {
	return eventType == "Warning" ||
		reason == "Killing" && (strings.Contains(message, "failed liveness probe") || strings.Contains(message, "failed startup probe") ||
			message == "FailedPostStartHook")
}
