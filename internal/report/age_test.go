package report

import (
	"testing"

	"k8s.io/utils/ptr"
)

// TestCopyAgeAsKubectlPrintsIt: an age the engine could not read is <unknown>, a negative one
// (created after the reference time) <invalid>, as kubectl's translateTimestampSince prints a
// pod's; never a saturated 292y or a clamped 0s.
func TestCopyAgeAsKubectlPrintsIt(t *testing.T) {
	for _, tt := range []struct {
		in   *int64
		want string
	}{
		{nil, "<unknown>"},
		{ptr.To[int64](-600), "<invalid>"},
		{ptr.To[int64](90), "90s"},
		{ptr.To[int64](3 * 3600), "3h"},
	} {
		if got := CopyAge(tt.in); got != tt.want {
			t.Errorf("CopyAge(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
