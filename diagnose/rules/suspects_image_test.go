package rules

import "testing"

// TestPullUnreachable reads containerd's pull errors as the kubelet reports them (Failed events,
// ErrImagePull states): a registry that does not resolve, refuses, times out or answers 5xx cannot
// be reached; a 401 or an image it does not have is the reference's fault.
func TestPullUnreachable(t *testing.T) {
	const img = `failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": `
	for _, tc := range []struct {
		reason, text string
		want         bool
	}{
		{"Failed", `Failed to pull image "r.example/a:1": ` + img + `failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp: lookup r.example on 10.96.0.10:53: no such host`, true},
		{"ErrImagePull", img + `failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp 10.0.0.5:443: connect: connection refused`, true},
		{"ErrImagePull", img + `unexpected status from HEAD request to https://r.example/v2/a/manifests/1: 503 Service Unavailable`, true},
		{"ErrImagePull", img + `unexpected status from HEAD request to https://r.example/v2/a/manifests/1: 401 Unauthorized`, false},
		{"ErrImagePull", "rpc error: code = NotFound desc = " + img + "r.example/a:1: not found", false},
		{"BackOff", "Back-off restarting failed container app in pod a_ns(uid)", false},
	} {
		if got := PullUnreachable(&Signal{Reason: tc.reason, Text: tc.text}); got != tc.want {
			t.Errorf("PullUnreachable(%s %.80q...) = %v, want %v", tc.reason, tc.text, got, tc.want)
		}
	}
}
